import type { Services } from '../services.ts';
import { notifyDeliveries } from '../services.ts';
import type { WorkerFactory } from '../server.ts';
import { repositoryById } from '../domain/repos.ts';
import { recordEvents } from '../events/outbox.ts';
import { journaledPushes, readPush, removePush, type PushEntry, type RefUpdate } from './pushJournal.ts';
import { pushEventsFor } from './pushEvents.ts';

/** What listeners of the 'pushed' signal receive (pull requests raise `synchronize` from it). */
export interface PushedSignal {
  repositoryId: number;
  senderId: number | null;
  updates: RefUpdate[];
}

/** The signal the smart-HTTP route raises, with the journal entry, once a push has landed and is on disk. */
export const PUSH_LANDED = 'push-landed';

/** Attempts at one journaled push before it is left for the next start, and the pause after each failure. */
const ATTEMPTS = 4;
const RETRY_PAUSE_MS = [1000, 5000, 30_000];

/**
 * Records one journaled push: one `push` event per updated ref, built as the repository
 * was just after the push, written to the outbox in one transaction; then the
 * dispatcher is woken, the 'pushed' signal raised and the journal file removed. A
 * crash before the removal records the push again at the next start (at least once,
 * like deliveries).
 */
async function recordPush(services: Services, entry: PushEntry): Promise<void> {
  const landed = await readPush(entry);
  const repo = landed && landed.updates.length > 0 ? await repositoryById(services.db, entry.repositoryId) : undefined;
  if (landed && repo) {
    const started = performance.now();
    const row = entry.senderId === null ? undefined : await services.db('users').where('id', entry.senderId).first('id', 'login');
    const sender = row ? { id: Number(row.id), login: String(row.login) } : null;
    const events = (await pushEventsFor(services, repo, sender, landed.updates, landed.refsAfter)).map((e) => ({ ...e, occurredAt: landed.landedAt }));
    const built = performance.now();
    await services.db.transaction((trx) => recordEvents(trx, events));
    services.log.info(
      { repository: `${repo.org}/${repo.name}`, refs: landed.updates.length, build_ms: Math.round(built - started), record_ms: Math.round(performance.now() - built) },
      'push recorded',
    );
    notifyDeliveries(services);
    services.signals.emit('pushed', { repositoryId: repo.id, senderId: sender?.id ?? null, updates: landed.updates } satisfies PushedSignal);
  }
  await removePush(entry);
}

/**
 * The push recorder: turns journaled pushes into push events in the background, so a
 * `git push` returns as soon as its refs and its journal entry are on disk. Pushes to
 * one repository are recorded one at a time, in the order they landed; different
 * repositories' side by side. At start it records what a stopped process left in the
 * journal. A push that keeps failing (the database away) is tried a few times, then
 * left on disk for the next start. stop() waits for the pushes being recorded.
 */
export const pushRecorder: WorkerFactory = (services) => {
  const queued = new Set<string>();
  const chains = new Map<number, Promise<void>>();
  let stopping = false;
  let wakeSleepers = () => {};
  const stopped = new Promise<void>((resolve) => (wakeSleepers = resolve));

  const attempt = async (entry: PushEntry) => {
    for (let n = 1; ; n++) {
      try {
        return await recordPush(services, entry);
      } catch (err) {
        const last = n >= ATTEMPTS || stopping;
        const msg = last ? 'could not record a push; it stays in the journal for the next start' : 'could not record a push; trying again';
        services.log.error({ err, repository_id: entry.repositoryId, attempt: n }, msg);
        if (last) return;
        await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS[n - 1]).unref())]);
        if (stopping) return;
      }
    }
  };

  const enqueue = (entry: PushEntry) => {
    if (queued.has(entry.file)) return; // raised by the route and found by the start-up scan alike
    queued.add(entry.file);
    const next = (chains.get(entry.repositoryId) ?? Promise.resolve()).then(() => attempt(entry)).finally(() => queued.delete(entry.file));
    chains.set(entry.repositoryId, next);
    void next.finally(() => {
      if (chains.get(entry.repositoryId) === next) chains.delete(entry.repositoryId);
    });
  };

  return {
    async start() {
      services.signals.on(PUSH_LANDED, enqueue);
      const left = journaledPushes(services.config.dataDir);
      if (left.length > 0) services.log.warn({ pushes: left.length }, 'recording the events of pushes a stop interrupted');
      for (const entry of left) enqueue(entry);
    },
    async stop() {
      stopping = true;
      wakeSleepers();
      services.signals.off(PUSH_LANDED, enqueue);
      while (chains.size > 0) await Promise.all(chains.values());
    },
  };
};
