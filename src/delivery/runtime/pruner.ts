import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { periodicWorker } from '../../work/periodic.ts';
import type { Worker } from '../../work/worker.ts';

/** Deletes finished deliveries past their retention, on the turns this node takes (src/work/periodic.ts). */
export interface Pruner extends Worker {
  /** One pass: what finished before now − retention goes; resolves with how many rows went (0 on an error, which is logged). `turnAt`: the periodic turn's time, logged with the pass. */
  run(turnAt?: number): Promise<number>;
}

/**
 * Runs `prune(before)`, with `before` = now − `retentionMs`, once a period (`everyMs`)
 * between every node on the database: a periodic job (`prune_deliveries`) whose turns the
 * nodes share, so several nodes prune once a period, not once each. Failures are logged,
 * never thrown.
 */
export function createPruner(o: {
  prune: (before: number) => Promise<number>;
  retentionMs: number;
  everyMs: number;
  db: Db;
  node: string;
  log: Logger;
}): Pruner {
  async function run(turnAt?: number) {
    try {
      const n = await o.prune(Date.now() - o.retentionMs);
      // Every pass, even one that found nothing: a line a period says pruning runs, and on which node.
      o.log.info({ deliveries: n, turnAt }, 'pruned finished deliveries');
      return n;
    } catch (err) {
      o.log.warn({ err }, 'could not prune deliveries');
      return 0;
    }
  }
  const worker = periodicWorker({
    db: o.db,
    job: 'prune_deliveries',
    node: o.node,
    everyMs: o.everyMs,
    run: async (turnAt) => void (await run(turnAt)),
    log: o.log,
  });
  return { run, start: () => worker.start(), stop: () => worker.stop() };
}
