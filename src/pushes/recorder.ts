import type { Services } from '../services.ts';
import { wake, SIGNAL } from '../services.ts';
import type { WorkerFactory } from '../work/worker.ts';
import { createWorkLoop } from '../work/loop.ts';
import { isDeadPredecessor, legacyPushNode, nodeId } from '../work/nodeId.ts';
import { isPostgres } from '../db/connect.ts';
import { repositoryById } from '../domain/repos.ts';
import { synchronizePulls } from '../domain/pulls.ts';
import { recordEvents } from '../events/outbox.ts';
import { openCommitReader } from '../git/commitReader.ts';
import { repoDir } from '../git/bare.ts';
import { buildPushEvents, planPush } from '../domain/pushEvents.ts';
import { chunksOf } from './chunking.ts';
import { legacyPushes, removePushLog } from './log.ts';
import { claimPushRecord, failPushRecord, insertPushRecord, LeaseLost, markChunkDone, releasePushRecord, renewLease, type PushRecord } from './records.ts';
import { PUSH_CHANNEL } from './wake.ts';
import { pushMetrics } from './metrics.ts';
import { isPermanentFailure, MAX_INTERRUPTIONS, parkPushRecord } from './parking.ts';
import { pushRecordHolders, takeBackPushRecords } from './takeBack.ts';
import { dropOrphanPushRecord } from './orphans.ts';
import { pushSender } from './sender.ts';
import { markPushMirrorsDue } from '../domain/pushMirrorsDue.ts';

/** Push records recorded side by side by one node (each a different repository). */
const CONCURRENCY = 2;
/** How often the database is asked for due records anyway (a missed wake, a retry falling due). */
const POLL_MS = 1000;
/** The abort reason of a record whose lease another node took over. */
const LEASE_LOST = 'lease-lost';

class Stopping extends Error {}

/**
 * Records one claimed push record: plans its events (the same plan whenever it runs),
 * then writes them chunk by chunk from the first chunk not yet done. Each chunk's events,
 * the `synchronize` events of the pull requests its branches move, and the chunk's mark
 * commit in one transaction, so a crash resumes after the last committed chunk. The
 * dispatcher is woken after each chunk, so deliveries start before the push is done.
 * An aborted `signal` (stopping, lease lost) ends it after the chunk in hand.
 */
async function recordPush(services: Services, node: string, rec: PushRecord, signal: AbortSignal): Promise<void> {
  const { db, config } = services;
  const repo = await repositoryById(db, rec.repositoryId);
  if (!repo) return dropOrphanPushRecord(db, rec.id); // deleted since: nothing to tell
  const started = performance.now();
  const sender = await pushSender(db, rec.senderId);
  const chunks = chunksOf(await planPush(config, repo, rec.updates, rec.refsAfter), rec.chunking);
  if (chunks.length === 0) chunks.push([]);
  const planned = performance.now();
  const metrics = pushMetrics(services);
  // One cat-file for the whole push; the next chunk's commits are read while a chunk commits.
  const reader = openCommitReader(repoDir(config.reposDir, repo.org, repo.name));
  const build = (k: number) =>
    buildPushEvents(config, repo, sender, chunks[k], reader).then((events) => events.map((e) => ({ ...e, occurredAt: rec.landedAt })));
  let mirrorsDue = 0;
  try {
    let next: ReturnType<typeof build> | undefined;
    for (let k = rec.chunksDone; k < chunks.length; k++) {
      const events = await (next ?? build(k));
      if (signal.aborted) throw new Stopping();
      if (k + 1 < chunks.length) {
        next = build(k + 1);
        next.catch(() => undefined); // its failure is met when the loop awaits it
      }
      await db.transaction(async (trx) => {
        await markChunkDone(trx, rec.id, node, k, k === chunks.length - 1);
        const synchronized = await synchronizePulls(
          trx,
          config,
          repo,
          sender,
          chunks[k].map((p) => p.update),
        );
        await recordEvents(trx, [...events, ...synchronized]);
        // The push is recorded: its repository's push mirrors owe a sync (same transaction).
        if (k === chunks.length - 1) mirrorsDue = await markPushMirrorsDue(trx, repo.id);
      });
      if (mirrorsDue > 0) wake(services).pushMirrors();
      metrics.chunks.inc();
      wake(services).deliveries();
      // Let requests in between chunks.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    reader.close();
  }
  metrics.recorded.inc();
  services.log.info(
    {
      repository: `${repo.org}/${repo.name}`,
      push_record: rec.id,
      refs: rec.updates.length,
      chunks: chunks.length,
      plan_ms: Math.round(planned - started),
      record_ms: Math.round(performance.now() - planned),
    },
    'push recorded',
  );
}

/** One attempt at a record: recorded, given back (stopping), or failed (retried after a backoff, or parked). */
async function attempt(services: Services, node: string, rec: PushRecord, signal: AbortSignal): Promise<void> {
  const { db, log } = services;
  try {
    await recordPush(services, node, rec, signal);
  } catch (err) {
    if (err instanceof LeaseLost || (err instanceof Stopping && signal.reason === LEASE_LOST))
      return void log.warn({ push_record: rec.id }, 'push record taken over by another node');
    if (err instanceof Stopping) return void (await releasePushRecord(db, rec.id, node).catch(() => {}));
    pushMetrics(services).failures.inc();
    if (isPermanentFailure(err)) {
      const reason = `recording failed with an error every retry would meet again: ${(err as Error).message}`;
      await parkPushRecord(db, rec.id, node, reason).catch(() => undefined);
      return void log.error(
        { err, push_record: rec.id, repository_id: rec.repositoryId },
        'could not record a push; parked, it will not be tried again by itself',
      );
    }
    const attempts = rec.attempts + 1;
    const nextTryAt = await failPushRecord(db, rec.id, node, attempts, (err as Error)?.message ?? String(err)).catch(() => undefined);
    log.error(
      { err, push_record: rec.id, repository_id: rec.repositoryId, attempts, next_try_at: nextTryAt },
      'could not record a push; it will be tried again',
    );
  }
}

/** Claims up to `limit` records one statement each; a record whose node died on it MAX_INTERRUPTIONS times is parked, not returned. */
async function claimRecords(services: Services, node: string, limit: number): Promise<PushRecord[]> {
  const claimed: PushRecord[] = [];
  while (claimed.length < limit) {
    const rec = await claimPushRecord(services.db, node, services.config.pushLeaseMs);
    if (!rec) break;
    if (rec.interruptions < MAX_INTERRUPTIONS) {
      claimed.push(rec);
      continue;
    }
    // Whatever killed its node every time would kill this one: it is not started again.
    await parkPushRecord(
      services.db,
      rec.id,
      node,
      `the node recording this push stopped ${rec.interruptions} times while it ran; it will not be started again by itself`,
    );
    services.log.error(
      { push_record: rec.id, repository_id: rec.repositoryId, interruptions: rec.interruptions },
      'push record parked after repeated node deaths',
    );
  }
  return claimed;
}

/** Moves journal files an earlier version left under DATA_DIR/pushes into push_records. */
async function moveLegacyPushes(services: Services): Promise<void> {
  const legacy = await legacyPushes(services.config.dataDir);
  if (legacy.length > 0) services.log.warn({ pushes: legacy.length }, 'moving journaled pushes of an earlier version into the database');
  for (const push of legacy) {
    await insertPushRecord(services.db, push.repositoryId, push.senderId, push).catch((err) =>
      services.log.error({ err, file: push.file }, 'could not move a journaled push'),
    );
    await removePushLog(push.file);
  }
}

/**
 * The push recorder: turns push records (landed by any node's smart-HTTP route through
 * land.ts) into push events, on the worker loop (src/work/loop.ts). Any node claims any due record
 * under a lease it renews while it works; a dead node's lease runs out and another node
 * takes the record over. Records of one repository are recorded one at a time in landing
 * order; other repositories' side by side. A new record wakes it at once (in process,
 * and through NOTIFY on Postgres), and a poll finds the rest. A failed attempt never
 * stops the process: it is logged, counted, and tried again after a backoff; the record
 * stays until it is recorded. A record that fails for a reason of its own (a data error
 * every retry would meet), or whose node died while recording it 3 times, is parked
 * instead: kept, with its reason, never run again by itself, and no longer holding up
 * its repository's later records.
 */
export const pushRecorder: WorkerFactory = (services) => {
  const { db, config, log } = services;
  const node = nodeId(config.dataDir);
  const loop = createWorkLoop<PushRecord>({
    claim: (limit) => claimRecords(services, node, limit),
    run: (rec, { signal }) => attempt(services, node, rec, signal),
    renew: (rec) => renewLease(db, rec.id, node),
    renewEveryMs: Math.max(50, config.pushLeaseMs / 3),
    giveBack: (rec) => releasePushRecord(db, rec.id, node),
    key: (rec) => rec.id,
    slots: CONCURRENCY,
    wakeOn: {
      signals: [[services.signals, SIGNAL.pushRecords]],
      listen: isPostgres(db) ? { databaseUrl: config.databaseUrl, channel: PUSH_CHANNEL, what: 'push record', log } : undefined,
      pollMs: POLL_MS,
    },
    // A stopping node finishes the chunk in hand and gives the record back.
    stopMode: 'abort',
    reasons: { stop: 'shutdown', leaseLost: LEASE_LOST },
    onError: (err) => log.warn({ err }, 'could not claim push records'),
  });

  return {
    async start() {
      // Claims that runs of this node (same host and DATA_DIR) held are its own: the process
      // that held them is gone (it died while recording them: counted, so a record that kills
      // its node is parked). Names of an earlier release (host:DATA_DIR) are this node's too.
      const legacy = legacyPushNode(config.dataDir);
      const holders = await pushRecordHolders(db);
      await takeBackPushRecords(
        db,
        holders.filter((h) => h === legacy || isDeadPredecessor(h, node, { sameDataDir: true })),
      );
      await moveLegacyPushes(services);
      loop.start();
    },
    stop: () => loop.stop(),
  };
};
