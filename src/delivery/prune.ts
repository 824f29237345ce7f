import type { Db } from '../db/connect.ts';

/**
 * Deletes finished deliveries (and, by cascade, their attempts) that finished before
 * `before`, in batches so no statement holds the table for long. Returns how many went.
 */
export async function pruneFinished(db: Db, before: number, batch = 2000): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = db('deliveries').whereIn('status', ['success', 'failed']).where('finished_at', '<', before).limit(batch).select('id');
    const n = await db('deliveries').whereIn('id', ids).delete();
    total += n;
    if (n < batch) return total;
  }
}
