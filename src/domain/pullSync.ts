import type { Services } from '../services.ts';
import type { WorkerFactory } from '../server.ts';
import { repositoryById } from './repos.ts';
import { synchronizePulls } from './pulls.ts';

/** What the Git transport signals after a push has landed and its push events are committed. */
interface Pushed {
  repositoryId: number;
  senderId: number | null;
  updates: { before: string; after: string; ref: string }[];
}

/** Handles one 'pushed' signal: open pull requests whose head moved raise `synchronize`. */
async function onPushed(services: Services, signal: Pushed): Promise<void> {
  const repo = await repositoryById(services.db, signal.repositoryId);
  if (!repo) return; // deleted since the push: nothing left to synchronize
  const row = signal.senderId === null ? undefined : await services.db('users').where('id', signal.senderId).first();
  const sender = row ? { id: Number(row.id), login: String(row.login) } : null;
  await synchronizePulls(services, repo, sender, signal.updates);
}

/**
 * Listens for pushes and keeps open pull requests' head shas current. The signal is
 * in-process and fires after the push commits, so a crash in between loses the
 * `synchronize` (the push events themselves are safe in the outbox).
 */
export const pullSyncWorker: WorkerFactory = (services) => {
  const inFlight = new Set<Promise<void>>();
  const listener = (signal: Pushed) => {
    const work = onPushed(services, signal)
      .catch((err) => services.log.error({ err, repository_id: signal.repositoryId }, 'pull request synchronize failed'))
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  };
  return {
    async start() {
      services.signals.on('pushed', listener);
    },
    async stop() {
      services.signals.off('pushed', listener);
      await Promise.all(inFlight);
    },
  };
};
