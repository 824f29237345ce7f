import { PassThrough, type Readable } from 'node:stream';
import type { Context, Next } from 'koa';
import { badRequest, payloadTooLarge, requestTimeout, WharfError } from '../errors/wharfError.ts';

/** How long a request body may stall (idle) and, when read whole, take in all (total). */
export interface BodyDeadlines {
  idleMs: number;
  totalMs: number;
}

declare module 'koa' {
  interface DefaultContext {
    /** The deadlines of every request body of the app, set on its context by createApp (read through bodyDeadlines()). */
    bodyDeadlines?: BodyDeadlines;
  }
}

/** Used where no app set its own (a bare Koa in a unit test): the configuration's defaults. */
const DEFAULT_DEADLINES: BodyDeadlines = { idleMs: 30_000, totalMs: 120_000 };

/** The deadlines of this request's body, set on the app's context by createApp. */
export function bodyDeadlines(ctx: Context): BodyDeadlines {
  return ctx.bodyDeadlines ?? DEFAULT_DEADLINES;
}

/** The error of a body that stalled or took too long: a 408 the client can read. */
export { requestTimeout };

/**
 * Reads a body whole, at most `limit` bytes (a 413 past it, or at once when Content-Length
 * says so), failing with a 408 when nothing arrives for the idle deadline or the whole body
 * takes longer than the total one. On failure the request stream is left paused and detached;
 * closeUnfinished() then ends the connection after the answer.
 */
export function readWhole(ctx: Context, limit: number, source: Readable = ctx.req): Promise<Buffer> {
  const { idleMs, totalMs } = bodyDeadlines(ctx);
  const declared = source === ctx.req ? Number(ctx.get('content-length') || 0) : 0;
  if (declared > limit) return Promise.reject(payloadTooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let idle: NodeJS.Timeout;
    const total = setTimeout(() => fail(requestTimeout('total', totalMs)), totalMs);
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => fail(requestTimeout('idle', idleMs)), idleMs);
    };
    const done = () => {
      clearTimeout(idle);
      clearTimeout(total);
      source.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted).off('close', onClose);
    };
    const fail = (err: Error) => {
      done();
      source.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(payloadTooLarge(limit));
      chunks.push(chunk);
      arm();
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => fail(err instanceof WharfError ? err : badRequest('Could not read the request body'));
    const onAborted = () => fail(badRequest('The request body was cut short'));
    const onClose = () => fail(badRequest('The request body was cut short'));
    source.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted).on('close', onClose);
    arm();
  });
}

/**
 * The request body passed through as it arrives, for bodies too big to read whole (a push,
 * an LFS upload): when nothing arrives for the idle deadline while the reader wants more, the
 * returned stream fails with a 408 and the request is detached and paused, so whoever reads
 * it stops and can answer.
 */
export function idleLimited(ctx: Context, source: Readable = ctx.req): PassThrough {
  const { idleMs } = bodyDeadlines(ctx);
  // Room for a few of the socket's 64 KiB reads: with the default 16 KiB, every read paused
  // the request until the reader drained, which cost a 53 MB push some 40 ms.
  const out = new PassThrough({ highWaterMark: 256 * 1024 });
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      // Paused by backpressure, the wait is ours (a busy or not yet started reader), not the client's.
      if (source.readableFlowing === false || out.writableNeedDrain) return arm();
      source.unpipe(out);
      source.pause();
      out.destroy(requestTimeout('idle', idleMs));
    }, idleMs);
  };
  source.on('data', arm);
  const stop = () => {
    clearTimeout(idle);
    source.off('data', arm);
  };
  source.once('end', stop);
  source.once('close', () => {
    stop();
    // A client gone mid-body: pipe() would leave the reader waiting for an end that never comes.
    if (!source.readableEnded) out.destroy(badRequest('The request body was cut short'));
  });
  out.once('close', stop);
  // Whoever detaches the request (the backend has exited) drops the rest: no deadline then.
  out.once('unpipe', stop);
  arm();
  source.pipe(out);
  return out;
}

/**
 * Ends the connection after an answer given before its request body was all received
 * (a refusal, a 408, a 413): Node would otherwise keep reading and dropping that body for
 * as long as the client sends it, a trickle included.
 */
export async function closeUnfinished(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } finally {
    if (!ctx.req.complete && !ctx.headerSent) ctx.set('Connection', 'close');
  }
}

/**
 * Cuts an answer its client has stopped reading: once the response has bytes waiting to be
 * written and none has left for `idleMs`, the connection is destroyed (whoever produces the
 * answer sees the response close unfinished and stops: `git http-backend` is killed, a file
 * stream closed) and `onCut` runs. A client that reads, however slowly, moves bytes and is
 * never cut; an answer still being produced (nothing waiting to be written) is not the
 * client's wait. Looked at every quarter of `idleMs`; stops with the response.
 */
export function cutStalledAnswer(ctx: Context, idleMs: number, onCut: () => void = () => {}): void {
  const socket = ctx.req.socket;
  const res = ctx.res;
  let written = socket.bytesWritten;
  let stalledSince: number | null = null;
  const look = () => {
    if (socket.destroyed) return stop();
    const moved = socket.bytesWritten !== written;
    written = socket.bytesWritten;
    const waiting = socket.writableLength > 0 || res.writableLength > 0 || res.writableNeedDrain;
    if (moved || !waiting) {
      stalledSince = null;
      return;
    }
    stalledSince ??= performance.now();
    if (performance.now() - stalledSince < idleMs) return;
    stop();
    onCut();
    socket.destroy();
  };
  const timer = setInterval(look, Math.max(10, Math.floor(idleMs / 4)));
  timer.unref();
  const stop = () => clearInterval(timer);
  res.once('close', stop);
}
