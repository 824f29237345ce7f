import type { Services } from '../../services.ts';
import type { Worker } from '../../work/worker.ts';
import { nodeId } from '../../work/nodeId.ts';
import { isPostgres } from '../../db/connect.ts';
import { claimDue, type Claimed } from '../store/claim.ts';
import { recordResults, type AttemptResult } from '../store/complete.ts';
import { nextDueAt } from '../store/nextDue.ts';
import { pruneFinished } from '../store/prune.ts';
import { markInFlight } from '../store/markInFlight.ts';
import { releaseClaims, type Release } from '../store/release.ts';
import { mainConnectionRunner, sqliteFile } from '../store/sqlite.ts';
import { SqliteThread } from '../store/sqliteThread.ts';
import { FairQueue } from '../pacing/fairQueue.ts';
import { createGate } from '../pacing/gate.ts';
import { createHealthKeeper } from '../pacing/healthKeeper.ts';
import { createProber } from '../pacing/prober.ts';
import { attemptMaker } from '../attempt/attempt.ts';
import { deliveryMetrics } from '../attempt/metrics.ts';
import type { DeliveryTransport } from '../attempt/transport.ts';
import { httpTransport } from '../attempt/http/transport.ts';
import { announcer } from './listen.ts';
import { dispatchTuning } from './tuning.ts';
import { createClaimLoop } from './claimLoop.ts';
import { createResultWriter } from './resultWriter.ts';
import { createDueTimer } from './dueTimer.ts';
import { createPruner } from './pruner.ts';
import { deliveryPipeline } from './pipeline.ts';
import { dispatcherLifecycle } from './lifecycle.ts';

/** The gate's verdict when there is nothing to heed. */
const GO = { send: true } as const;

/** Longest the dispatcher sleeps without looking: catches work written by a process that could not wake it (SQLite, the CLI). */
const IDLE_POLL_MS = 2000;

/** What a dispatcher may be given instead of its defaults. */
export interface DispatcherOptions {
  /**
   * How deliveries are carried: signed HTTP POSTs (attempt/http/transport.ts) unless
   * another transport is given here. The dispatcher closes it when it stops.
   */
  transport?: DeliveryTransport;
}

/**
 * The webhook dispatcher (a Worker), put together from its parts. Each delivery goes
 * claim → gate → attempt → result (pipeline.ts), the four steps built below in that
 * order. The claim loop claims due deliveries, fairly (claim.ts: organizations, then their webhooks, take turns by
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
export function createDispatcher(services: Services, options: DispatcherOptions = {}): Worker {
  const { db, config, log } = services;
  const owner = nodeId(config.dataDir);
  const concurrency = config.webhookConcurrency;
  const postgres = isPostgres(db);
  const tuning = dispatchTuning(postgres ? 'postgres' : 'sqlite', config);
  // An organization with nothing running may start beyond the places, up to twice as many in all.
  const queue = new FairQueue(concurrency, concurrency);
  const transport = options.transport ?? httpTransport(config);
  // SQLite: claims and result writes run on a thread of their own when the database is a file.
  const file = postgres ? null : sqliteFile(db);
  const sqliteThread = file ? new SqliteThread(file) : null;
  const sqlite = sqliteThread ? sqliteThread.run : mainConnectionRunner(db);
  const announce = postgres ? announcer(db, log) : () => {};

  // 1. Claim: due deliveries under a lease, fairly across organizations and webhooks.
  const claim = (limit: number, idle: boolean) =>
    claimDue(db, {
      owner,
      limit,
      now: Date.now(),
      leaseMs: tuning.leaseMs,
      firstDelayMs: config.webhookRetrySchedule[0],
      idle,
      shares: queue.ledger.shares(),
      sqlite,
    });

  // 2. Gate: holds what paused webhooks claimed, puts off what Retry-After or max_rate asks to.
  const health = createHealthKeeper({ db, config, log, released: () => claims.wake() });
  const gate = createGate(db, health.local);

  // 3. Attempt: the body from payloadFor, sent through the transport, the next step decided.
  const attempt = attemptMaker({
    config,
    transport,
    metrics: deliveryMetrics(services),
    log,
    markInFlight: (c, inFlight) => markInFlight(db, owner, c.id, c.claims, inFlight, Date.now() + tuning.leaseMs, sqlite),
  });

  // 4. Result: written in batches, then accounted for endpoint health.
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

  const deliver = deliveryPipeline({
    gate: (c) => (c.health === null && health.quiet ? GO : gate(c)),
    attempt,
    result: (r) => writer.add(r),
    giveBack: (r) => releaser.add(r),
    log,
  });

  // Places for claims: WEBHOOK_CONCURRENCY attempts (or results being written) and
  // `ahead` times as many claimed deliveries waiting behind them, so the next attempt
  // never waits for a claim's round trip and claims come in big batches.
  const freeSlots = () => (1 + tuning.ahead) * concurrency - queue.size - queue.pending;
  const claims = createClaimLoop<Claimed>({
    claim,
    // The attempt keeps its place until its result is written. A crash in between leaves
    // the attempt uncounted: it is made again, same number, when the lease runs out.
    start: (c) => queue.add({ org: c.org, hook: c.hookId, cap: c.maxConcurrency, run: () => deliver(c) }),
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
  const pruner = createPruner({
    prune: (before) => pruneFinished(db, before),
    retentionMs: config.deliveryRetentionMs,
    everyMs: config.deliveryPruneEveryMs,
    db,
    node: owner,
    log,
  });

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
    transport,
    sqliteThread,
    announce,
    wantClaims: () => claims.moreDue && freeSlots() >= tuning.claimBatchMin,
  });
}
