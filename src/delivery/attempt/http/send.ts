import type { Dispatcher } from 'undici';
import { errorCause, errorCode, errorName } from '../../../errors/thrown.ts';
import { HostPolicyError } from '../../../net/hostPolicy.ts';

/** Most of a response body that is read and kept (SPEC §5.2). */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/** What one HTTP attempt gave: a status (with headers and body) or an error text. */
export interface HttpResult {
  statusCode: number | null;
  error: string | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  startedAt: number;
  endedAt: number;
  durationMs: number;
}

/** The short, secret-free error text of SPEC §5.3 for a failed connection, by error class and code. */
export function errorText(err: unknown): string {
  const code = errorCode(err) ?? errorCode(errorCause(err));
  if (
    errorName(err) === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'ETIMEDOUT'
  )
    return 'timeout';
  // Short for the delivery list, and still naming what was refused and the setting that decides.
  if (code === 'EHOSTPOLICY') {
    const refusal = [err, errorCause(err)].find((e): e is HostPolicyError => e instanceof HostPolicyError)?.refusal;
    return refusal ? `blocked by host policy (${refusal.addressClass} address; WEBHOOK_ALLOWED_HOSTS)` : 'blocked by host policy (WEBHOOK_ALLOWED_HOSTS)';
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns error';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection reset';
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))) return 'tls error';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  return 'connection error';
}

function flatHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** A webhook URL split for undici's dispatch (cached: a webhook's URL is the same on every attempt). */
const targets = new Map<string, { origin: string; path: string }>();

export function target(url: string): { origin: string; path: string } {
  let t = targets.get(url);
  if (t === undefined) {
    if (targets.size > 10_000) targets.clear();
    const u = new URL(url);
    targets.set(url, (t = { origin: u.origin, path: `${u.pathname}${u.search}` }));
  }
  return t;
}

/** An attempt that outlived WEBHOOK_TIMEOUT: internal to the sender, recorded as the attempt's error text. */
class AttemptTimeout extends Error {
  override name = 'TimeoutError';
}

/**
 * POSTs one delivery through the dispatcher's Agent: redirects are never followed (a 3xx
 * is an answer like any other), connecting must finish within `timeoutMs`, and then the
 * whole exchange, body included, within `timeoutMs` of the request starting. At most
 * 64 KiB of the response body is read; the rest is dropped with the connection.
 *
 * The time-out never beats what already happened (SPEC §5.3: an attempt counts once its
 * request has started, and a failing receiver sees exactly the schedule's attempts): when
 * the timer fires, the I/O that came in meanwhile is handled first (one turn of the event
 * loop, as undici does for its connect time-out), so a process that was busy for longer
 * than the time-out neither gives up on a connection that was already up, recording a
 * `timeout` the receiver never saw, nor calls an answer that had arrived a time-out.
 *
 * Written on undici's dispatch handler rather than `request()`: an attempt needs no
 * response stream, async iterator or AbortSignal, and at thousands of attempts a second
 * those were a good part of the dispatcher's time.
 */
export function sendAttempt(agent: Dispatcher, url: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<HttpResult> {
  return new Promise<HttpResult>((resolve) => {
    const attempt = new Attempt(resolve, timeoutMs);
    const { origin, path } = target(url);
    try {
      agent.dispatch({ origin, path, method: 'POST', headers, body }, attempt);
    } catch (err) {
      attempt.failed(err);
    }
  });
}

/** One attempt's dispatch handler: gathers the answer and resolves once, whichever way the attempt ends. */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly startedAt = Date.now();
  private readonly t0 = performance.now();
  private timer: NodeJS.Timeout;
  /** Raised when the request starts: a time-out armed before it no longer counts. */
  private phase = 0;
  private settled = false;
  private controller: Dispatcher.DispatchController | null = null;
  private statusCode = 0;
  private responseHeaders: Record<string, string> | null = null;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly resolve: (o: HttpResult) => void,
    private readonly timeoutMs: number,
  ) {
    this.timer = this.arm();
  }

  /** A time-out for the current phase (connecting, then the exchange), checked after the I/O already in. */
  private arm(): NodeJS.Timeout {
    const phase = this.phase;
    return setTimeout(() => setImmediate(() => phase === this.phase && !this.settled && this.timedOut()), this.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) return controller.abort(new AttemptTimeout());
    // Connected: the request is written now, and the exchange gets its own time-out.
    this.phase += 1;
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // informational (102 Processing): the answer is still to come
    this.statusCode = statusCode;
    this.responseHeaders = flatHeaders(headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled || this.size >= RESPONSE_BODY_LIMIT) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size >= RESPONSE_BODY_LIMIT) {
      // Enough read: the answer is what came so far, and the connection is dropped.
      this.answered();
      controller.abort(new Error('response body limit reached'));
    }
  }

  onResponseEnd(): void {
    this.answered();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.failed(err);
  }

  failed(err: unknown): void {
    this.settle(null, errorText(err), null, null);
  }

  private timedOut(): void {
    this.failed(new AttemptTimeout());
    this.controller?.abort(new AttemptTimeout());
  }

  private answered(): void {
    const buffer = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    // Kept as text: a NUL (which Postgres text cannot hold) becomes U+FFFD, like any byte that is not UTF-8.
    const text = buffer.subarray(0, RESPONSE_BODY_LIMIT).toString('utf8').replaceAll('\0', '\uFFFD');
    this.settle(this.statusCode, null, this.responseHeaders, text);
  }

  private settle(statusCode: number | null, error: string | null, responseHeaders: Record<string, string> | null, responseBody: string | null): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const durationMs = Math.round(performance.now() - this.t0);
    this.resolve({ statusCode, error, responseHeaders, responseBody, startedAt: this.startedAt, endedAt: this.startedAt + durationMs, durationMs });
  }
}
