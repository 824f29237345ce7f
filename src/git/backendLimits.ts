import { PassThrough, Transform, pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import PQueue from 'p-queue';
import type { Context } from 'koa';
import { badRequest, HttpError } from '../http/errors.ts';

/** A request body for the backend: the stream it reads, and a promise settled only if reading it must stop (over the cap, bad gzip). */
export interface RequestBody {
  stream: Readable;
  failed: Promise<Error>;
}

/**
 * Most bytes a gzip-encoded request body may inflate to, and most compressed bytes read.
 * git gzips only fetch requests small enough to send in one piece (under http.postBuffer),
 * and http-backend itself refuses a plain request body over 10 MiB
 * (GIT_HTTP_MAX_REQUEST_BUFFER), so nothing git sends comes near it; a gzip bomb stops here.
 */
export const INFLATED_BODY_LIMIT = 10 * 1024 * 1024;

/** Limits how many `git http-backend` processes run at once; requests over it wait their turn. */
export class BackendSlots {
  private readonly queue: PQueue;
  constructor(readonly limit: number) {
    this.queue = new PQueue({ concurrency: limit });
  }
  /** Resolves, once a slot is free, with the function that gives it back (call it exactly once). */
  acquire(): Promise<() => void> {
    return new Promise((granted) => {
      void this.queue.add(() => new Promise<void>((release) => granted(release)));
    });
  }
}

/** Raised while reading a request body that is over INFLATED_BODY_LIMIT. */
const tooLarge = () =>
  new HttpError(413, 'payload_too_large', `Compressed request body is over its limit (${INFLATED_BODY_LIMIT / 1024 / 1024} MiB inflated)`);

/** Passes bytes on until `limit` have gone through, then fails with a 413. */
function capped(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      // Nothing past the limit is passed on, so the backend never sees more than its own 10 MiB buffer.
      if (seen > limit) done(tooLarge());
      else done(null, chunk);
    },
  });
}

/**
 * The request body as the backend must read it. A gzip body (what git sends for larger
 * fetch requests) is inflated here, at most INFLATED_BODY_LIMIT bytes, rather than by
 * http-backend, which inflates without a bound. The CGI environment is changed to match:
 * no encoding, no length (http-backend then reads to the end).
 */
export function requestBody(ctx: Context, env: Record<string, string>): RequestBody {
  const encoding = (env.HTTP_CONTENT_ENCODING ?? '').trim().toLowerCase();
  if (encoding !== 'gzip' && encoding !== 'x-gzip') return { stream: ctx.req, failed: new Promise(() => {}) };
  delete env.HTTP_CONTENT_ENCODING;
  delete env.CONTENT_LENGTH;
  const out = new PassThrough();
  const compressed = capped(INFLATED_BODY_LIMIT);
  const failed = new Promise<Error>((resolve) => {
    // SECURITY: both sides are capped: the inflated bytes, and the compressed ones (empty deflate blocks inflate to nothing).
    pipeline(compressed, zlib.createGunzip(), capped(INFLATED_BODY_LIMIT), out, (err) => {
      if (!err) return;
      // The request itself stays open for the answer; the rest of it is read and dropped.
      ctx.req.unpipe(compressed);
      ctx.req.resume();
      resolve(err instanceof HttpError ? err : badRequest('Request body is not valid gzip'));
    });
  });
  ctx.req.pipe(compressed);
  return { stream: out, failed };
}
