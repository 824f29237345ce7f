/** Gathers results and writes them in batches. */
export interface ResultWriter<R> {
  /** Queues a result; resolves once the batch holding it was written (or its write failed). */
  add(result: R): Promise<void>;
  /** Resolves when every result queued so far was written. */
  drain(): Promise<void>;
}

/**
 * A batch writer: a write starts as soon as a result is queued and a writer is free
 * (results queued in the same turn of the event loop join it), and takes up to
 * `maxBatch` of what waits. So a result waits at most for the writes already running,
 * and the batches are whatever gathered meanwhile: small when writes are quick, larger
 * when the database is slow. A failed write is reported to `onError` and its results
 * count as handled: nothing is retried here (for deliveries, the lease runs out).
 * `written` runs after each write.
 */
export function createResultWriter<R>(o: {
  write: (batch: R[]) => Promise<unknown>;
  writers: number;
  maxBatch: number;
  onError: (err: unknown, batch: R[]) => void;
  written?: () => void;
}): ResultWriter<R> {
  let waiting: { result: R; done: () => void }[] = [];
  const running = new Set<Promise<void>>();

  function flush() {
    if (running.size >= o.writers || waiting.length === 0) return;
    const write = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      const batch = waiting.slice(0, o.maxBatch);
      waiting = waiting.slice(batch.length);
      if (batch.length === 0) return;
      try {
        await o.write(batch.map((w) => w.result));
      } catch (err) {
        o.onError(
          err,
          batch.map((w) => w.result),
        );
      } finally {
        for (const w of batch) w.done();
      }
    })().finally(() => {
      running.delete(write);
      o.written?.();
      flush();
    });
    running.add(write);
  }

  return {
    add(result) {
      return new Promise<void>((done) => {
        waiting.push({ result, done });
        flush();
      });
    },
    async drain() {
      while (running.size > 0 || waiting.length > 0) {
        flush();
        await Promise.all(running);
      }
    },
  };
}
