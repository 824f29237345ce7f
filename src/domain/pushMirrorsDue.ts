import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';

/**
 * Marks a repository's push mirrors that sync on push due now, in the caller's transaction
 * (the one that records a push: a push recorded is a sync owed, crash or not). Raising
 * `generation` makes a sync already running go again when it ends. Returns how many.
 */
export async function markPushMirrorsDue(db: Db | Knex.Transaction, repositoryId: number): Promise<number> {
  const now = Date.now();
  return db('push_mirrors')
    .where({ repository_id: repositoryId, sync_on_push: true })
    .update({
      generation: db.raw('generation + 1'),
      next_sync_at: db.raw('CASE WHEN next_sync_at > ? THEN ? ELSE next_sync_at END', [now, now]),
    });
}
