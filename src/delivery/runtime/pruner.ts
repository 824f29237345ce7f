import type { Logger } from 'pino';

/** Deletes finished work past its retention, now and then. */
export interface Pruner {
  /** Prunes once now, then every `everyMs`. */
  start(): void;
  stop(): void;
  /** One pass: what finished before now − retention goes; resolves with how many rows went (0 on an error, which is logged). */
  run(): Promise<number>;
}

/** Runs `prune(before)` at start and every `everyMs`, with `before` = now − `retentionMs`; failures are logged, never thrown. */
export function createPruner(o: { prune: (before: number) => Promise<number>; retentionMs: number; everyMs: number; log: Logger }): Pruner {
  let interval: NodeJS.Timeout | undefined;
  async function run() {
    try {
      const n = await o.prune(Date.now() - o.retentionMs);
      if (n > 0) o.log.info({ deliveries: n }, 'pruned finished deliveries');
      return n;
    } catch (err) {
      o.log.warn({ err }, 'could not prune deliveries');
      return 0;
    }
  }
  return {
    run,
    start() {
      interval = setInterval(run, o.everyMs);
      interval.unref();
      void run();
    },
    stop() {
      clearInterval(interval);
    },
  };
}
