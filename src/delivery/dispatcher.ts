import os from 'node:os';
import { randomBytes } from 'node:crypto';
import PQueue from 'p-queue';
import type { Services } from '../services.ts';
import type { Worker } from '../server.ts';
import { isPostgres } from '../db/connect.ts';
import { claimDue, type Claimed } from './claim.ts';
import { recordResults, type AttemptResult } from './complete.ts';
import { nextDueAt } from './nextDue.ts';
import { pruneFinished } from './prune.ts';
import { nextStep, retryAfterMs } from './schedule.ts';
import { deliveryHeaders } from './sign.ts';
import { sendAttempt, target, type Outcome } from './send.ts';
import { deliveryAgent } from './agent.ts';
import { announcer, listenForDeliveries, type Listener } from './listen.ts';
import { deliveryMetrics } from './metrics.ts';
import { mainConnectionRunner, sqliteFile } from './sqlite.ts';
import { SqliteThread } from './sqliteThread.ts';

/** Longest the dispatcher sleeps without looking: catches work written by a process that could not wake it (SQLite, the CLI). */
const IDLE_POLL_MS = 2000;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * The webhook dispatcher (a Worker): claims due deliveries, sends them through one
 * keep-alive Agent with at most WEBHOOK_CONCURRENCY in flight (p-queue), and writes
 * each result. Woken at once by the 'deliveries' signal after a commit, by NOTIFY from
 * other processes on Postgres, and by a timer for retries falling due.
 */
export function createDispatcher(services: Services): Worker {
  const { db, config, log } = services;
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const concurrency = config.webhookConcurrency;
  const postgres = isPostgres(db);
  // Claims run ahead of the free slots (see freeSlots): up to `ahead` times
  // WEBHOOK_CONCURRENCY claimed deliveries wait behind the attempts in flight. Postgres
  // looks two batches ahead, as its claims are a round trip to a server that shares the
  // machine and can take several milliseconds under load; SQLite's claims are a quick
  // local call, and one batch is enough. A claimed delivery so waits for at most `ahead`
  // attempts before it (each at most WEBHOOK_TIMEOUT), then makes its own; the lease
  // covers all of them and the result write right after.
  const ahead = postgres ? 2 : 1;
  const leaseMs = (1 + ahead) * config.webhookTimeoutMs + 5_000;
  const metrics = deliveryMetrics(services);
  // The attempt line is built from fixed, secret-free fields (the target is an origin, which
  // drops any user info), so it skips the logger's redaction, a third of a line's cost.
  const attemptLog = log.child({}, { redact: { paths: [] } });
  const queue = new PQueue({ concurrency });
  const agent = deliveryAgent(config);
  // SQLite: claims and result writes run on a thread of their own when the database is a file.
  const file = postgres ? null : sqliteFile(db);
  const sqliteThread = file ? new SqliteThread(file) : null;
  const sqlite = sqliteThread ? sqliteThread.run : mainConnectionRunner(db);
  let stopping = false;
  let looping: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  let listener: Listener | undefined;
  let results: AttemptResult[] = [];
  const writers = new Set<Promise<void>>();
  const maxWriters = postgres ? 4 : 1;
  // True while the last claim filled every free slot: more work is probably due.
  let moreDue = false;
  let timerWanted: NodeJS.Timeout | undefined;
  // Claim in batches: finished attempts only trigger a claim once this many places are free.
  const batchMin = Math.max(1, Math.floor(concurrency / 2));
  // Places for new claims. Up to WEBHOOK_CONCURRENCY attempts run (p-queue) and up to
  // `ahead` times as many claimed deliveries wait behind them, so the next attempt never waits for a claim's
  // round trip and claims come in big batches (one statement, one commit, per batch). A
  // finished attempt frees its place at once, before its result is written, so the next
  // one starts while the write is on its way. Results not yet written are bounded all the
  // same: if the writer falls behind, claiming stops rather than letting leases run out on
  // deliveries that were in fact sent.
  let unwritten = 0;
  const maxUnwritten = concurrency * (2 + 2 * ahead);
  const freeSlots = () => Math.min((1 + ahead) * concurrency, maxUnwritten - unwritten) - queue.size - queue.pending;
  const announce = postgres ? announcer(db, log) : () => {};

  const wake = () => {
    if (stopping) return;
    if (looping) {
      again = true;
      return;
    }
    looping = loop().catch((err) => log.error({ err }, 'delivery dispatcher loop failed')).finally(() => {
      looping = null;
      wantTimer();
    });
  };

  async function loop() {
    do {
      again = false;
      while (!stopping) {
        const free = freeSlots();
        // A few free slots while attempts are in flight: wait for a batch's worth (fewer statements).
        if (free <= 0 || (free < batchMin && queue.pending > 0)) break;
        const claimed = await claimDue(db, { owner, limit: free, now: Date.now(), leaseMs, firstDelayMs: config.webhookRetrySchedule[0], sqlite });
        moreDue = claimed.length === free;
        for (const c of claimed) void queue.add(() => attempt(c));
        if (!moreDue) break;
      }
    } while (again && !stopping);
  }

  async function attempt(c: Claimed) {
    metrics.inFlight += 1;
    const headers = deliveryHeaders({ guid: c.guid, event: c.event, attempt: c.attempts, hookId: c.hookId, secret: c.secret, body: c.body, now: Date.now() });
    let outcome: Outcome;
    try {
      outcome = await sendAttempt(agent, c.url, headers, c.body, config.webhookTimeoutMs);
    } finally {
      metrics.inFlight -= 1;
    }
    const retryAfter = outcome.responseHeaders?.['retry-after'];
    const step = nextStep({
      statusCode: outcome.statusCode,
      retryAfterMs: retryAfterMs(retryAfter, outcome.endedAt),
      attempts: c.attempts,
      endedAt: outcome.endedAt,
      schedule: config.webhookRetrySchedule,
    });
    const ok = step.status === 'success';
    metrics.observe(ok ? 'success' : outcome.statusCode === null ? 'error' : 'failure', outcome.durationMs / 1000);
    // One line per attempt; the secret and the URL's path and query (which may carry tokens) stay out.
    attemptLog.info(
      { delivery_id: c.id, guid: c.guid, webhook_id: c.hookId, event: c.event, attempt: c.attempts, target: target(c.url).origin, status_code: outcome.statusCode, error: outcome.error, duration_ms: outcome.durationMs, result: step.status },
      'delivery attempt',
    );
    unwritten += 1;
    results.push({
      deliveryId: c.id,
      attempt: c.attempts,
      status: step.status,
      nextAttemptAt: step.nextAttemptAt,
      startedAt: outcome.startedAt,
      endedAt: outcome.endedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      requestHeaders: headers,
      responseHeaders: outcome.responseHeaders,
      responseBody: outcome.responseBody,
    });
    flush();
    // The slot frees as this returns: the queue's 'next' event claims more when a batch's worth is free.
  }

  /**
   * Writes the results gathered so far in one transaction. Postgres takes a few writers at
   * once (their commits overlap); SQLite serializes writers anyway, so it gets one.
   */
  function flush(): void {
    if (writers.size >= maxWriters || results.length === 0) return;
    const write = (async () => {
      // Let the results of attempts finishing in this same turn join the batch.
      await new Promise((resolve) => setImmediate(resolve));
      const batch = results;
      results = [];
      if (batch.length === 0) return;
      try {
        await recordResults(db, owner, batch, sqlite);
      } catch (err) {
        // Not written: the leases run out and the deliveries are sent again (at-least-once).
        log.error({ err }, 'could not record delivery results');
      } finally {
        unwritten -= batch.length;
      }
    })().finally(() => {
      writers.delete(write);
      if (results.length > 0) flush();
      else wantTimer();
      if (moreDue && freeSlots() >= batchMin) wake();
    });
    writers.add(write);
  }

  /** Re-arms the timer soon, once for many requests (a result or a loop's end may have changed the next due time). */
  function wantTimer() {
    if (timerWanted || stopping) return;
    timerWanted = setTimeout(() => {
      timerWanted = undefined;
      void armTimer();
    }, 20);
  }

  async function armTimer() {
    // Work is known to be due and attempts are in flight: their completions claim it.
    if (stopping || (moreDue && queue.pending > 0)) return;
    let wait = IDLE_POLL_MS;
    try {
      const due = await nextDueAt(db);
      if (due !== null) wait = Math.min(wait, Math.max(0, due - Date.now()));
    } catch (err) {
      log.warn({ err }, 'could not read the next due delivery');
    }
    if (stopping) return;
    clearTimeout(timer);
    timer = setTimeout(wake, wait);
  }

  const onLocalWork = () => {
    wake();
    announce();
  };

  async function prune() {
    try {
      const n = await pruneFinished(db, Date.now() - config.deliveryRetentionMs);
      if (n > 0) log.info({ deliveries: n }, 'pruned finished deliveries');
    } catch (err) {
      log.warn({ err }, 'could not prune deliveries');
    }
  }

  return {
    async start() {
      services.signals.on('deliveries', onLocalWork);
      // The last slot freed: nothing in flight to trigger the next claim, so look now.
      queue.on('idle', () => (moreDue ? wake() : wantTimer()));
      queue.on('next', () => {
        if (moreDue && freeSlots() >= batchMin) wake();
      });
      if (postgres) listener = listenForDeliveries(config.databaseUrl, wake, log);
      pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
      pruneTimer.unref();
      void prune();
      // Resumes everything that fell due while no process was running.
      wake();
    },
    async stop() {
      stopping = true;
      services.signals.off('deliveries', onLocalWork);
      clearTimeout(timer);
      clearTimeout(timerWanted);
      clearInterval(pruneTimer);
      await listener?.close();
      // No new claims; attempts in flight finish and their results are written.
      await looping;
      await queue.onIdle();
      while (writers.size > 0 || results.length > 0) {
        flush();
        await Promise.all(writers);
      }
      await agent.close();
      await sqliteThread?.close();
    },
  };
}
