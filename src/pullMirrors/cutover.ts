import { type Services, wake } from '../services.ts';
import { recordOrgEvents } from '../events/outbox.ts';
import { repositoryEvent } from '../domain/payloads/orgEvents.ts';
import { isPostgres } from '../db/connect.ts';
import { repoDir } from '../git/bare.ts';
import type { Repository } from '../domain/repos.ts';
import { conflict } from '../errors/wharfError.ts';
import { nodeId } from '../work/nodeId.ts';
import { dropStaging } from './refs.ts';
import { findMirror, requestSync, type Mirror } from './state.ts';
import { finishPending } from './sync.ts';
import { MIRROR_CHANNEL } from './runner.ts';

/** How long the cutover waits for a sync that is moving refs right now (a few ms of work) before it answers 409. */
const WAIT_FOR_MOVE_MS = 30_000;

/** Queues a sync of a mirror (SPEC §8.1.1: 202); a 409 `conflict` when the repository is not (or no longer) a mirror. */
export async function queueSync(services: Services, repo: Repository): Promise<Mirror> {
  const mirror = await requestSync(services.db, repo.id);
  if (!mirror) throw conflict(`${repo.org}/${repo.name} is not a mirror`);
  wake(services).pullMirrors();
  if (isPostgres(services.db)) await services.db.raw(`NOTIFY ${MIRROR_CHANNEL}`).catch((err) => services.log.warn({ err }, 'could not announce a mirror sync'));
  return mirror;
}

/**
 * The cutover (DELETE …/mirror): the repository stops being a mirror. The row goes only
 * while no sync is between writing its ref updates and committing their push record
 * (`pending` null), so once this returns no sync moves a ref of it: a sync still fetching
 * finds the row gone when it would write its updates, and stops (one running on this node
 * is aborted at once). Updates left by a sync whose node died are finished first (their
 * events recorded). The staged refs are removed. A 409 when the repository is not a mirror.
 * Raises `repository` mirror_cutover (organization webhooks) in the transaction that deletes the row.
 */
export async function stopMirroring(services: Services, repo: Repository, sender: { id: number; login: string } | null = null): Promise<void> {
  const { db, config, log } = services;
  const self = nodeId(config.dataDir);
  const deadline = Date.now() + WAIT_FOR_MOVE_MS;
  for (;;) {
    const mirror = await findMirror(db, repo.id);
    if (!mirror) throw conflict(`${repo.org}/${repo.name} is not a mirror`);
    if (mirror.pending === null) {
      const cut = await db.transaction(async (trx) => {
        const n = await trx('repository_mirrors').where({ repository_id: repo.id }).whereNull('pending').delete();
        if (n > 0) await recordOrgEvents(trx, [repositoryEvent(config, 'mirror_cutover', repo, sender)]);
        return n > 0;
      });
      if (cut) {
        wake(services).deliveries();
        break;
      }
      continue;
    }
    const now = Date.now();
    // Left by a dead sync: take it over and finish it here, so its events are not lost.
    const taken = await db('repository_mirrors')
      .where({ repository_id: repo.id })
      .whereNotNull('pending')
      .where((q) => q.whereNull('locked_by').orWhere('lease_expires_at', '<', now))
      .update({ locked_by: self, lease_expires_at: now + WAIT_FOR_MOVE_MS });
    if (taken > 0) {
      await finishPending(services, repo, (await findMirror(db, repo.id))!, self);
      continue;
    }
    if (Date.now() > deadline) throw conflict(`a sync of ${repo.org}/${repo.name} is moving its refs; try again`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  wake(services).mirrorStop(repo.id);
  await dropStaging(repoDir(config.reposDir, repo.org, repo.name)).catch((err) => log.warn({ err }, 'could not remove a mirror staging refs'));
  log.info({ repository: `${repo.org}/${repo.name}` }, 'mirror cut over');
}
