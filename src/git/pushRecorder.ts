import os from 'node:os';
import type { Services } from '../services.ts';
import { notifyDeliveries } from '../services.ts';
import type { WorkerFactory } from '../server.ts';
import { isPostgres } from '../db/connect.ts';
import { repositoryById } from '../domain/repos.ts';
import { synchronizePulls } from '../domain/pulls.ts';
import { recordEvents } from '../events/outbox.ts';
import { buildPushEvents, chunksOf, planPush } from './pushEvents.ts';
import { legacyPushes, removePushLog } from './pushLog.ts';
import { claimPushRecord, failPushRecord, insertPushRecord, LeaseLost, markChunkDone, releasePushRecord, renewLease, type PushRecord } from './pushRecords.ts';
import { listenForPushes } from './pushWake.ts';
import { pushMetrics } from './pushMetrics.ts';
import { isPermanentFailure, MAX_INTERRUPTIONS, parkPushRecord } from './pushParking.ts';

/** The in-process signal the smart-HTTP route raises once a push record is committed. */
export const PUSH_RECORDED = 'push-records';

/** Push records recorded side by side by one node (each a different repository). */
const CONCURRENCY = 2;
/** How often the database is asked for due records anyway (a missed wake, a retry falling due). */
const POLL_MS = 1000;

class Stopping extends Error {}

/**
 * Records one claimed push record: plans its events (the same plan whenever it runs),
 * then writes them chunk by chunk from the first chunk not yet done. Each chunk's events,
 * the `synchronize` events of the pull requests its branches move, and the chunk's mark
 * commit in one transaction, so a crash resumes after the last committed chunk. The
 * dispatcher is woken after each chunk, so deliveries start before the push is done.
 */
async function recordPush(services: Services, node: string, rec: PushRecord, stopping: () => boolean): Promise<void> {
  const { db, config } = services;
  const repo = await repositoryById(db, rec.repositoryId);
  if (!repo) return void (await db('push_records').where('id', rec.id).delete()); // deleted since: nothing to tell
  const started = performance.now();
  const row = rec.senderId === null ? undefined : await db('users').where('id', rec.senderId).first('id', 'login');
  const sender = row ? { id: Number(row.id), login: String(row.login) } : null;
  const chunks = chunksOf(await planPush(config, repo, rec.updates, rec.refsAfter));
  if (chunks.length === 0) chunks.push([]);
  const planned = performance.now();
  const metrics = pushMetrics(services);
  for (let k = rec.chunksDone; k < chunks.length; k++) {
    if (stopping()) throw new Stopping();
    const events = (await buildPushEvents(config, repo, sender, chunks[k])).map((e) => ({ ...e, occurredAt: rec.landedAt }));
    await db.transaction(async (trx) => {
      await markChunkDone(trx, rec.id, node, k, k === chunks.length - 1);
      const synchronized = await synchronizePulls(trx, config, repo, sender, chunks[k].map((p) => p.update));
      await recordEvents(trx, [...events, ...synchronized]);
    });
    metrics.chunks.inc();
    notifyDeliveries(services);
    // Let requests in between chunks.
    await new Promise((resolve) => setImmediate(resolve));
  }
  metrics.recorded.inc();
  services.log.info(
    { repository: `${repo.org}/${repo.name}`, push_record: rec.id, refs: rec.updates.length, chunks: chunks.length, plan_ms: Math.round(planned - started), record_ms: Math.round(performance.now() - planned) },
    'push recorded',
  );
}

/**
 * The push recorder: turns push records (written by any node's smart-HTTP route) into
 * push events. Any node claims any due record under a lease it renews while it works;
 * a dead node's lease runs out and another node takes the record over. Records of one
 * repository are recorded one at a time in landing order; other repositories' side by
 * side. A new record wakes it at once (in process, and through NOTIFY on Postgres), and
 * a poll finds the rest. A failed attempt never stops the process: it is logged,
 * counted, and tried again after a backoff; the record stays until it is recorded. A
 * record that fails for a reason of its own (a data error every retry would meet), or
 * whose node died while recording it 3 times, is parked instead: kept, with its reason,
 * never run again by itself, and no longer holding up its repository's later records.
 */
export const pushRecorder: WorkerFactory = (services) => {
  // One name per node (host and DATA_DIR): a restarted node takes its own claims back at once.
  const node = `${os.hostname()}:${services.config.dataDir}`.slice(-128);
  const running = new Set<Promise<void>>();
  let stopping = false;
  let filling = false;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let closeListener: (() => Promise<void>) | undefined;

  const attempt = async (rec: PushRecord) => {
    const renew = setInterval(() => void renewLease(services.db, rec.id, node).catch(() => {}), Math.max(50, services.config.pushLeaseMs / 3));
    try {
      await recordPush(services, node, rec, () => stopping);
    } catch (err) {
      if (err instanceof Stopping) return void (await releasePushRecord(services.db, rec.id, node).catch(() => {}));
      if (err instanceof LeaseLost) return void services.log.warn({ push_record: rec.id }, 'push record taken over by another node');
      pushMetrics(services).failures.inc();
      if (isPermanentFailure(err)) {
        const reason = `recording failed with an error every retry would meet again: ${(err as Error).message}`;
        await parkPushRecord(services.db, rec.id, node, reason).catch(() => undefined);
        return void services.log.error({ err, push_record: rec.id, repository_id: rec.repositoryId }, 'could not record a push; parked, it will not be tried again by itself');
      }
      const attempts = rec.attempts + 1;
      const nextTryAt = await failPushRecord(services.db, rec.id, node, attempts, (err as Error)?.message ?? String(err)).catch(() => undefined);
      services.log.error({ err, push_record: rec.id, repository_id: rec.repositoryId, attempts, next_try_at: nextTryAt }, 'could not record a push; it will be tried again');
    } finally {
      clearInterval(renew);
    }
  };

  const fill = async (): Promise<void> => {
    if (filling) return void (again = true);
    filling = true;
    try {
      do {
        again = false;
        while (!stopping && running.size < CONCURRENCY) {
          const rec = await claimPushRecord(services.db, node, services.config.pushLeaseMs);
          if (!rec) break;
          if (rec.interruptions >= MAX_INTERRUPTIONS) {
            // Whatever killed its node every time would kill this one: it is not started again.
            await parkPushRecord(services.db, rec.id, node, `the node recording this push stopped ${rec.interruptions} times while it ran; it will not be started again by itself`);
            services.log.error({ push_record: rec.id, repository_id: rec.repositoryId, interruptions: rec.interruptions }, 'push record parked after repeated node deaths');
            continue;
          }
          const work: Promise<void> = attempt(rec).finally(() => {
            running.delete(work);
            void fill();
          });
          running.add(work);
        }
      } while (again && !stopping);
    } catch (err) {
      services.log.warn({ err }, 'could not claim push records');
    } finally {
      filling = false;
    }
  };
  const wake = () => void fill();

  return {
    async start() {
      // Claims a previous run of this node held are its own: the process that held them is
      // gone (it died while recording them: counted, so a record that kills its node is parked).
      await services.db('push_records').where('locked_by', node).update({ locked_by: null, locked_at: null, interruptions: services.db.raw('interruptions + 1') });
      const legacy = await legacyPushes(services.config.dataDir);
      if (legacy.length > 0) services.log.warn({ pushes: legacy.length }, 'moving journaled pushes of an earlier version into the database');
      for (const push of legacy) {
        await insertPushRecord(services.db, push.repositoryId, push.senderId, push).catch((err) => services.log.error({ err, file: push.file }, 'could not move a journaled push'));
        await removePushLog(push.file);
      }
      services.signals.on(PUSH_RECORDED, wake);
      if (isPostgres(services.db)) closeListener = listenForPushes(services.config.databaseUrl, wake, services.log);
      poll = setInterval(wake, POLL_MS);
      poll.unref();
      wake();
    },
    async stop() {
      stopping = true;
      clearInterval(poll);
      services.signals.off(PUSH_RECORDED, wake);
      await closeListener?.();
      while (filling || running.size > 0) await Promise.all([...running, new Promise((resolve) => setTimeout(resolve, 10))]);
    },
  };
};
