import type { Services } from '../../services.ts';
import { SIGNAL } from '../../services.ts';
import type { Worker } from '../../work/worker.ts';
import { wakeOn } from '../../work/wakeSources.ts';
import type { Claimed } from '../store/claim.ts';
import type { AttemptResult } from '../store/complete.ts';
import type { Release } from '../store/release.ts';
import type { SqliteThread } from '../store/sqliteThread.ts';
import type { FairQueue } from '../pacing/fairQueue.ts';
import type { createProber } from '../pacing/prober.ts';
import type { DeliveryTransport } from '../attempt/transport.ts';
import type { createClaimLoop } from './claimLoop.ts';
import type { createDueTimer } from './dueTimer.ts';
import type { Pruner } from './pruner.ts';
import type { ResultWriter } from './resultWriter.ts';
import { CHANNEL } from './listen.ts';
import { closeDispatchConnections } from '../store/postgres.ts';

/** The parts of a dispatcher its start and stop drive. */
export interface DispatcherParts {
  services: Services;
  postgres: boolean;
  claims: ReturnType<typeof createClaimLoop<Claimed>>;
  timer: ReturnType<typeof createDueTimer>;
  pruner: Pruner;
  prober: ReturnType<typeof createProber>;
  queue: FairQueue;
  writer: ResultWriter<AttemptResult>;
  releaser: ResultWriter<Release>;
  transport: DeliveryTransport;
  sqliteThread: SqliteThread | null;
  announce: () => void;
  /** True when more is due and enough places are free for a claim batch. */
  wantClaims: () => boolean;
}

/** Starts a dispatcher's parts (wake-ups, pruner, the first claim) and stops them in order, draining what is in flight. */
export function dispatcherLifecycle(p: DispatcherParts): Worker {
  const { services, claims, timer, pruner, queue, writer } = p;
  const { config, log } = services;
  let closeSources: (() => Promise<void>) | undefined;
  const onLocalWork = () => {
    claims.wakeForNew();
    p.announce();
  };
  return {
    async start() {
      // A commit in this process wakes the loop and tells the others; NOTIFY from the others
      // wakes it too. The due timer is its poll (it sleeps until the next retry falls due).
      services.signals.on(SIGNAL.deliveries, onLocalWork);
      // The last place freed: nothing in flight to trigger the next claim, so look now.
      queue.on('idle', () => (claims.moreDue ? claims.wake() : timer.want()));
      queue.on('next', () => {
        if (p.wantClaims()) claims.wake();
      });
      if (p.postgres)
        closeSources = wakeOn({ listen: { databaseUrl: config.databaseUrl, channel: CHANNEL, what: 'delivery', log } }, () => claims.wakeForNew());
      await pruner.start();
      p.prober.start();
      // Resumes everything that fell due while no process was running.
      claims.wake();
    },
    async stop() {
      services.signals.off(SIGNAL.deliveries, onLocalWork);
      timer.stop();
      await pruner.stop();
      p.prober.stop();
      await closeSources?.();
      // No new claims; attempts in flight finish and their results are written.
      await claims.stop();
      await queue.onIdle();
      await writer.drain();
      await p.releaser.drain();
      await p.transport.close();
      await p.sqliteThread?.close();
      if (p.postgres) await closeDispatchConnections(services.db);
    },
  };
}
