import type { Services } from '../services.ts';
import { notifyDeliveries } from '../services.ts';
import { repositoryById, type Repository } from '../domain/repos.ts';
import { recordEvents } from '../events/outbox.ts';
import { repoDir } from './bare.ts';
import { settleHead } from './head.ts';
import type { RefUpdate } from './hooks.ts';
import { closePush, readUpdates, type PushEntry } from './pushJournal.ts';
import { pushEventsFor } from './pushEvents.ts';

/** What listeners of the 'pushed' signal receive (pull requests raise `synchronize` from it). */
export interface PushedSignal {
  repositoryId: number;
  senderId: number | null;
  updates: RefUpdate[];
}

/**
 * Everything a landed push causes: HEAD settled on a first push, one `push` event per
 * updated ref written to the outbox in one transaction, then the dispatcher woken and
 * the 'pushed' signal raised.
 */
export async function afterPush(services: Services, repo: Repository, sender: { id: number; login: string } | null, updates: RefUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const started = performance.now();
  // Neither needs the other, so they run side by side: the client waits for both.
  // HEAD can only be left dangling when a branch was created or deleted.
  const branchesChanged = updates.some((u) => u.ref.startsWith('refs/heads/') && (/^0+$/.test(u.before) || /^0+$/.test(u.after)));
  const [settled, events] = await Promise.all([
    branchesChanged ? settleHead(services.db, repoDir(services.config.reposDir, repo.org, repo.name), repo) : repo,
    pushEventsFor(services, repo, sender, updates),
  ]);
  // A first push may have just chosen the default branch: the payloads must name it.
  for (const event of events) (event.payload.repository as { default_branch: string }).default_branch = settled.default_branch;
  const built = performance.now();
  await services.db.transaction((trx) => recordEvents(trx, events));
  services.log.info({ repository: `${repo.org}/${repo.name}`, refs: updates.length, build_ms: Math.round(built - started), record_ms: Math.round(performance.now() - built) }, 'push recorded');
  notifyDeliveries(services);
  services.signals.emit('pushed', { repositoryId: repo.id, senderId: sender?.id ?? null, updates } satisfies PushedSignal);
}

/**
 * Records the events of pushes a stopped process left unrecorded (see pushJournal.ts).
 * An entry is removed only after its events commit: a crash in between records them
 * again at the next start (at least once, like deliveries).
 */
export async function recordLeftoverPushes(services: Services, entries: PushEntry[]): Promise<void> {
  for (const entry of entries) {
    const updates = await readUpdates(entry);
    const repo = updates.length > 0 ? await repositoryById(services.db, entry.repositoryId) : undefined;
    if (repo) {
      const sender = entry.senderId === null ? null : await services.db('users').where('id', entry.senderId).first('id', 'login');
      await afterPush(services, repo, sender ?? null, updates);
      services.log.warn({ repository: `${repo.org}/${repo.name}`, refs: updates.length }, 'recorded the events of a push interrupted by a stop');
    }
    await closePush(entry);
  }
}
