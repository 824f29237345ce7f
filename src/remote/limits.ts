import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Raised when a phase of an import makes no progress for too long; the message is safe to show. Ends in the job's `error`, never in a request. */
export class StallError extends Error {
  override name = 'StallError';
}

/** Below this average rate over a stall window, a transfer counts as stalled (a slow drip is a stall). */
export const MIN_BYTES_PER_SECOND = 1024;

/**
 * Reads a body (any async iterable of chunks) up to `cap` bytes and returns it as text.
 * Stops reading, and destroys the body, as soon as the cap is passed: a large answer
 * is never held whole in memory.
 */
export async function readCapped(body: AsyncIterable<Buffer | string> & { destroy?: (err?: Error) => unknown }, cap: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buf.length;
    if (total > cap) {
      body.destroy?.();
      throw new Error(`${what} is larger than ${Math.round(cap / 1024 / 1024)} MiB`);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A watchdog for one phase: `mark(bytes)` reports progress; when a window of `stallMs`
 * passes with fewer than MIN_BYTES_PER_SECOND on average and no other progress, `onStall`
 * runs once. `touch()` counts as progress of its own (our own local work moving on, never a source's word).
 */
export function stallWatch(stallMs: number, onStall: () => void): { mark(bytes: number): void; touch(): void; stop(): void } {
  const need = Math.max(1, Math.floor((stallMs / 1000) * MIN_BYTES_PER_SECOND));
  let bytes = 0;
  let progressed = false;
  const timer = setInterval(() => {
    if (progressed || bytes >= need) {
      progressed = false;
      bytes = 0;
      return;
    }
    clearInterval(timer);
    onStall();
  }, stallMs);
  timer.unref();
  return {
    mark(n) {
      bytes += n;
    },
    touch() {
      progressed = true;
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** A pass-through stream that fails with StallError when its data slows below the stall rule. */
export function stallGuard(stallMs: number, what: string): Transform {
  const guard: Transform = new Transform({
    transform(chunk: Buffer, _enc, done) {
      watch.mark(chunk.length);
      done(null, chunk);
    },
    flush(done) {
      watch.stop();
      done();
    },
    destroy(err, done) {
      watch.stop();
      done(err);
    },
  });
  const watch = stallWatch(stallMs, () => guard.destroy(new StallError(`${what} stalled: less than 1 KiB/s for ${Math.round(stallMs / 1000)}s`)));
  return guard;
}

/** `source` piped through a stall guard; an error or stall on either side ends both. */
export function guarded(source: Readable, stallMs: number, what: string): Transform {
  const guard = stallGuard(stallMs, what);
  pipeline(source, guard).catch(() => {}); // errors surface on `guard`, which the caller reads
  return guard;
}
