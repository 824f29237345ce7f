import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { LfsIntegrityError } from './lfsStore.ts';

/** A pass-through check of streamed content against the oid and size it was announced with. */
export interface ContentCheck {
  /**
   * Passes the bytes on, failing with LfsIntegrityError as soon as more than the size arrive,
   * and at the end (before it ends its own output) unless the content is exactly the one
   * announced: whatever reads it sees the end of the stream only for matching content.
   */
  transform: Transform;
  /** Throws LfsIntegrityError unless exactly the size arrived and its SHA-256 is the oid; call once the stream ended. */
  verify(): void;
}

/** Checks content as it streams, so that a store can refuse it before keeping any of it. */
export function contentCheck(oid: string, size: number): ContentCheck {
  const hash = createHash('sha256');
  let received = 0;
  let outcome: LfsIntegrityError | null | undefined;
  const verify = () => {
    if (outcome === undefined) {
      if (received !== size) outcome = new LfsIntegrityError(`received ${received} bytes, announced ${size}`);
      else if (hash.digest('hex') !== oid) outcome = new LfsIntegrityError('content does not match its SHA-256 oid');
      else outcome = null;
    }
    if (outcome) throw outcome;
  };
  const transform = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > size) return done(new LfsIntegrityError(`more than the announced ${size} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      try {
        verify();
        done();
      } catch (err) {
        done(err as Error);
      }
    },
  });
  return { transform, verify };
}
