import type { Logger } from 'pino';

/** Deletes finished work past its retention, now and then. */
export interface Pruner {
  /** Takes its turn at start and whenever one falls due, looking about four times a period. */
  start(): void;
  stop(): void;
  /** One pass: what finished before now − retention goes; resolves with how many rows went (0 on an error, which is logged). */
  run(): Promise<number>;
}

/** The longest a node waits between looks for its turn: a turn is taken at most this late. */
const MAX_LOOK_MS = 60_000;

/**
 * Runs `prune(before)`, with `before` = now − `retentionMs`, on each turn `turn` grants:
 * the turns are shared by every node (src/work/periodic.ts), one per `everyMs` between
 * them all, so several nodes prune once a period, not once each. Failures are logged,
 * never thrown.
 */
export function createPruner(o: {
  prune: (before: number) => Promise<number>;
  retentionMs: number;
  everyMs: number;
  /** Whether this node takes the turn due now (true: it is its own; false: another node's, or none is due). */
  turn: (now: number, everyMs: number) => Promise<boolean>;
  log: Logger;
}): Pruner {
  let interval: NodeJS.Timeout | undefined;
  let running = false;
  async function run() {
    try {
      const n = await o.prune(Date.now() - o.retentionMs);
      // Every pass, even one that found nothing: a line a period says pruning runs, and on which node.
      o.log.info({ deliveries: n }, 'pruned finished deliveries');
      return n;
    } catch (err) {
      o.log.warn({ err }, 'could not prune deliveries');
      return 0;
    }
  }
  async function look() {
    if (running) return;
    running = true;
    try {
      if (await o.turn(Date.now(), o.everyMs)) await run();
    } catch (err) {
      o.log.warn({ err }, 'could not take the pruning turn');
    } finally {
      running = false;
    }
  }
  return {
    run,
    start() {
      interval = setInterval(() => void look(), Math.min(MAX_LOOK_MS, Math.max(50, Math.floor(o.everyMs / 4))));
      interval.unref();
      void look();
    },
    stop() {
      clearInterval(interval);
    },
  };
}
