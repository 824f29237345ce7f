import type { Dispatcher } from 'undici';

/** Most of a response body that is read and kept (SPEC §5.2). */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/** What one HTTP attempt gave: a status (with headers and body) or an error text. */
export interface Outcome {
  statusCode: number | null;
  error: string | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  startedAt: number;
  endedAt: number;
  durationMs: number;
}

/** The short, secret-free error text of SPEC §5.3 for a failed connection, by error class and code. */
export function errorText(err: any): string {
  const code = err?.code ?? err?.cause?.code;
  if (err?.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return 'timeout';
  if (code === 'EHOSTPOLICY') return 'blocked by host policy';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'could not resolve host';
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

class AttemptTimeout extends Error {
  override name = 'TimeoutError';
}

/**
 * POSTs one delivery through the dispatcher's Agent: redirects are never followed (a 3xx
 * is an answer like any other), and the whole exchange, body included, must finish
 * within `timeoutMs`. At most 64 KiB of the response body is read; the rest is dropped
 * with the connection.
 *
 * Written on undici's dispatch handler rather than `request()`: an attempt needs no
 * response stream, async iterator or AbortSignal, and at thousands of attempts a second
 * those were a good part of the dispatcher's time.
 */
export function sendAttempt(agent: Dispatcher, url: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<Outcome> {
  const startedAt = Date.now();
  const t0 = performance.now();
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | null = null;
    let statusCode = 0;
    let responseHeaders: Record<string, string> | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (o: Pick<Outcome, 'statusCode' | 'error' | 'responseHeaders' | 'responseBody'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const durationMs = Math.round(performance.now() - t0);
      resolve({ ...o, startedAt, endedAt: startedAt + durationMs, durationMs });
    };
    const answered = () => {
      // Kept as text: a NUL (which Postgres text cannot hold) becomes U+FFFD, like any byte that is not UTF-8.
      const buffer = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const text = buffer.subarray(0, RESPONSE_BODY_LIMIT).toString('utf8').replaceAll('\0', '\uFFFD');
      settle({ statusCode, error: null, responseHeaders, responseBody: text });
    };
    const failed = (err: unknown) => settle({ statusCode: null, error: errorText(err), responseHeaders: null, responseBody: null });
    const timer = setTimeout(() => {
      failed(new AttemptTimeout());
      controller?.abort(new AttemptTimeout());
    }, timeoutMs);
    const { origin, path } = target(url);
    try {
      agent.dispatch({ origin, path, method: 'POST', headers, body }, {
        onRequestStart(c) {
          controller = c;
          if (settled) c.abort(new AttemptTimeout());
        },
        onResponseStart(_c, code, raw) {
          if (code < 200) return; // informational (100 Continue): the answer is still to come
          statusCode = code;
          responseHeaders = flatHeaders(raw);
        },
        onResponseData(c, chunk) {
          if (settled || size >= RESPONSE_BODY_LIMIT) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_BODY_LIMIT) {
            // Enough read: the answer is what came so far, and the connection is dropped.
            answered();
            c.abort(new Error('response body limit reached'));
          }
        },
        onResponseEnd() {
          answered();
        },
        onResponseError(_c, err) {
          failed(err);
        },
      });
    } catch (err) {
      failed(err);
    }
  });
}
