import type { Services } from '../../services.ts';
import type { Worker } from '../../work/worker.ts';
import { nodeId } from '../../work/nodeId.ts';
import { wakeOn } from '../../work/wakeSources.ts';
import { isPostgres } from '../../db/connect.ts';
import { claimDue, type Claimed } from '../store/claim.ts';
import { recordResults, type AttemptResult } from '../store/complete.ts';
import { nextDueAt } from '../store/nextDue.ts';
import { pruneFinished } from '../store/prune.ts';
import { deliveryAgent } from '../attempt/agent.ts';
import { announcer, CHANNEL } from './listen.ts';
import { deliveryMetrics } from '../attempt/metrics.ts';
import { mainConnectionRunner, sqliteFile } from '../store/sqlite.ts';
import { SqliteThread } from '../store/sqliteThread.ts';
import { dispatchTuning } from './tuning.ts';
import { createClaimLoop } from './claimLoop.ts';
import { FairQueue } from '../pacing/fairQueue.ts';
import { createResultWriter } from './resultWriter.ts';
import { createDueTimer } from './dueTimer.ts';
import { createPruner } from './pruner.ts';
import { attemptMaker } from '../attempt/attempt.ts';
import { markInFlight } from '../store/markInFlight.ts';
import { createHealthKeeper } from '../pacing/healthKeeper.ts';
import { createGate } from '../pacing/gate.ts';
import { releaseClaims, type Release } from '../store/release.ts';
import { createProber } from '../pacing/prober.ts';
import { SIGNAL } from '../../services.ts';

/** The gate's verdict when there is nothing to heed. */
const GO = { send: true } as const;

/** Longest the dispatcher sleeps without looking: catches work written by a process that could not wake it (SQLite, the CLI). */
const IDLE_POLL_MS = 2000;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * The webhook dispatcher (a Worker), put together from its parts: the claim loop claims
 * due deliveries, fairly (claim.ts: organizations, then their webhooks, take turns by
 * the time their attempts held a place, serviceLedger.ts, and the leases they hold now),
 * into a queue that makes WEBHOOK_CONCURRENCY attempts at once and starts the next from
 * the organization served the least (fairQueue.ts); each
 * attempt's result goes to the result writer, the due timer wakes the loop for retries
 * falling due, and the pruner deletes what is past retention. Woken at once by the
 * 'deliveries' signal after a commit and by NOTIFY from other processes on Postgres.
 *
 * An attempt holds its place in the queue until its result is written: what a SIGKILL
 * repeats (attempts started and not yet recorded) is so bounded by twice
 * WEBHOOK_CONCURRENCY (the places, and the starts of organizations that had none).
 */
export function createDispatcher(services: Services): Worker {
  const { db, config, log } = services;
  const owner = nodeId(config.dataDir);
  const concurrency = config.webhookConcurrency;
  const postgres = isPostgres(db);
  const tuning = dispatchTuning(postgres ? 'postgres' : 'sqlite', config);
  // An organization with nothing running may start beyond the places, up to twice as many in all.
  const queue = new FairQueue(concurrency, concurrency);
  const agent = deliveryAgent(config);
  // SQLite: claims and result writes run on a thread of their own when the database is a file.
  const file = postgres ? null : sqliteFile(db);
  const sqliteThread = file ? new SqliteThread(file) : null;
  const sqlite = sqliteThread ? sqliteThread.run : mainConnectionRunner(db);
  const announce = postgres ? announcer(db, log) : () => {};
  const attempt = attemptMaker({
    config,
    agent,
    metrics: deliveryMetrics(services),
    log,
    markInFlight: (c) => markInFlight(db, owner, c.id, c.claims, Date.now() + tuning.leaseMs, sqlite),
  });

  const health = createHealthKeeper({ db, config, log, released: () => claims.wake() });
  const gate = createGate(db, health.local);
  const writer = createResultWriter<AttemptResult>({
    write: async (batch) => {
      await recordResults(db, owner, batch, sqlite);
      await health.afterResults(batch);
    },
    writers: tuning.writers,
    maxBatch: tuning.writeBatchMax,
    // Not written: the leases run out and the attempts are made again (at-least-once).
    onError: (err) => log.error({ err }, 'could not record delivery results'),
    written: () => timer.want(),
  });

  // Deliveries the gate held or put off: given back unattempted.
  const releaser = createResultWriter<Release>({
    write: (batch) => releaseClaims(db, owner, batch),
    writers: 1,
    maxBatch: 500,
    onError: (err) => log.error({ err }, 'could not give back held deliveries'),
    written: () => timer.want(),
  });

  // Places for claims: WEBHOOK_CONCURRENCY attempts (or results being written) and
  // `ahead` times as many claimed deliveries waiting behind them, so the next attempt
  // never waits for a claim's round trip and claims come in big batches.
  const freeSlots = () => (1 + tuning.ahead) * concurrency - queue.size - queue.pending;
  const claims = createClaimLoop<Claimed>({
    claim: (limit, idle) =>
      claimDue(db, {
        owner,
        limit,
        now: Date.now(),
        leaseMs: tuning.leaseMs,
        firstDelayMs: config.webhookRetrySchedule[0],
        idle,
        shares: queue.ledger.shares(),
        sqlite,
      }),
    // The attempt keeps its place until its result is written. A crash in between leaves
    // the attempt uncounted: it is made again, same number, when the lease runs out.
    start: (c) =>
      queue.add({
        org: c.org,
        hook: c.hookId,
        cap: c.maxConcurrency,
        run: async () => {
          try {
            const verdict = c.health === null && health.quiet ? GO : await gate(c);
            if (verdict.send) return await writer.add(await attempt(c));
            return await releaser.add({ deliveryId: c.id, claims: c.claims, until: verdict.until });
          } catch (err) {
            log.error({ err, delivery_id: c.id }, 'delivery attempt failed');
          }
        },
      }),
    freeSlots,
    inFlight: () => queue.pending,
    batchMin: tuning.claimBatchMin,
    onError: (err) => log.error({ err }, 'delivery dispatcher loop failed'),
    settled: () => timer.want(),
  });

  const timer = createDueTimer({
    nextDue: () => nextDueAt(db),
    fire: () => claims.wake(),
    idlePollMs: IDLE_POLL_MS,
    // Work is known to be due and attempts are in flight: their completions claim it.
    skip: () => claims.moreDue && queue.pending > 0,
    onError: (err) => log.warn({ err }, 'could not read the next due delivery'),
  });

  const prober = createProber({ db, config, log, due: () => claims.wake() });
  const pruner = createPruner({ prune: (before) => pruneFinished(db, before), retentionMs: config.deliveryRetentionMs, everyMs: PRUNE_EVERY_MS, log });

  return dispatcherLifecycle({
    services,
    postgres,
    claims,
    timer,
    pruner,
    prober,
    queue,
    writer,
    releaser,
    agent,
    sqliteThread,
    announce,
    wantClaims: () => claims.moreDue && freeSlots() >= tuning.claimBatchMin,
  });
}

/** The parts of a dispatcher its start and stop drive. */
interface DispatcherParts {
  services: Services;
  postgres: boolean;
  claims: ReturnType<typeof createClaimLoop<Claimed>>;
  timer: ReturnType<typeof createDueTimer>;
  pruner: ReturnType<typeof createPruner>;
  prober: ReturnType<typeof createProber>;
  queue: FairQueue;
  writer: ReturnType<typeof createResultWriter<AttemptResult>>;
  releaser: ReturnType<typeof createResultWriter<Release>>;
  agent: ReturnType<typeof deliveryAgent>;
  sqliteThread: SqliteThread | null;
  announce: () => void;
  /** True when more is due and enough places are free for a claim batch. */
  wantClaims: () => boolean;
}

/** Starts a dispatcher's parts (wake-ups, pruner, the first claim) and stops them in order, draining what is in flight. */
function dispatcherLifecycle(p: DispatcherParts): Worker {
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
      pruner.start();
      p.prober.start();
      // Resumes everything that fell due while no process was running.
      claims.wake();
    },
    async stop() {
      services.signals.off(SIGNAL.deliveries, onLocalWork);
      timer.stop();
      pruner.stop();
      p.prober.stop();
      await closeSources?.();
      // No new claims; attempts in flight finish and their results are written.
      await claims.stop();
      await queue.onIdle();
      await writer.drain();
      await p.releaser.drain();
      await p.agent.close();
      await p.sqliteThread?.close();
    },
  };
}
