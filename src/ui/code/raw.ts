import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { BINARY_PEEK, looksBinary } from './content.ts';

/**
 * A raw file never runs as a page of Wharf's origin: no script, style, frame or form may
 * load (default-src 'none'), and the document is sandboxed into an opaque origin even if
 * a browser renders it.
 */
export const RAW_CSP = "default-src 'none'; sandbox";

/** The first `n` bytes of a stream (or all, when shorter), and a stream of the whole content from the start. */
async function peek(source: Readable, n: number): Promise<{ head: Buffer; body: Readable }> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < n) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    first.push(next.value);
    size += next.value.length;
  }
  async function* whole() {
    yield* first;
    if (ended) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  const body = Readable.from(whole(), { objectMode: false });
  // Ending the body early (HEAD, a reader gone) must end the source too: a git left
  // writing into a pipe nobody reads would wait for ever.
  body.once('close', () => source.destroy());
  return { head: Buffer.concat(first), body };
}

/** An attachment's Content-Disposition: an ASCII filename for old clients, the exact one as RFC 5987 UTF-8. */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/**
 * Streams a file's bytes as the answer: text as `text/plain; charset=utf-8`, anything
 * else (binary by git's rule) as an `application/octet-stream` attachment. Never the
 * file's own type, so a pushed HTML or SVG file is shown as text or downloaded, never
 * rendered; with nosniff and RAW_CSP besides. Only the first 8000 bytes are looked at
 * before the answer starts; the rest flows through.
 */
export async function sendRaw(ctx: Context, source: Readable, size: number, name: string): Promise<void> {
  const { head, body } = await peek(source, BINARY_PEEK);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', RAW_CSP);
  if (looksBinary(head)) {
    ctx.type = 'application/octet-stream';
    ctx.set('Content-Disposition', attachment(name));
  } else {
    ctx.type = 'text/plain; charset=utf-8';
  }
  ctx.body = body;
  ctx.length = size;
}
