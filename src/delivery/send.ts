import { request, type Dispatcher } from 'undici';

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

/**
 * POSTs one delivery through the dispatcher's Agent: redirects are never followed (a 3xx
 * is an answer like any other), and the whole exchange, body included, must finish
 * within `timeoutMs`. At most 64 KiB of the response body is read; the rest is dropped
 * with the connection.
 */
export async function sendAttempt(agent: Dispatcher, url: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<Outcome> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const done = (o: Omit<Outcome, 'startedAt' | 'endedAt' | 'durationMs'>): Outcome => {
    const durationMs = Math.round(performance.now() - t0);
    return { ...o, startedAt, endedAt: startedAt + durationMs, durationMs };
  };
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(url, { dispatcher: agent, method: 'POST', headers, body, signal });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= RESPONSE_BODY_LIMIT) {
        res.body.destroy();
        break;
      }
    }
    // Kept as text: a NUL (which Postgres text cannot hold) becomes U+FFFD, like any byte that is not UTF-8.
    const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8').replaceAll('\0', '\uFFFD');
    return done({ statusCode: res.statusCode, error: null, responseHeaders: flatHeaders(res.headers), responseBody: text });
  } catch (err) {
    return done({ statusCode: null, error: signal.aborted ? 'timeout' : errorText(err), responseHeaders: null, responseBody: null });
  }
}
