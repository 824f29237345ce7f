import type { Db } from '../../db/connect.ts';

/**
 * Deletes finished deliveries (and, by cascade, their attempts) that finished before
 * `before`, in batches so no statement holds the table for long, then the events older
 * than `before` that no delivery needs any more (pruneEvents). Returns how many
 * deliveries went.
 */
export async function pruneFinished(db: Db, before: number, batch = 2000): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = db('deliveries').whereIn('status', ['success', 'failed']).where('finished_at', '<', before).limit(batch).select('id');
    const n = await db('deliveries').whereIn('id', ids).delete();
    total += n;
    if (n < batch) break;
  }
  await pruneEvents(db, before, batch);
  return total;
}

/**
 * Deletes the events created before `before` that no delivery refers to: their
 * deliveries were pruned, their webhooks deleted, or none ever received them. An event
 * with a pending delivery, or a finished one still kept (it can be redelivered), stays
 * with its payload. In batches; returns how many events went.
 */
export async function pruneEvents(db: Db, before: number, batch = 2000): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = db('events')
      .where('created_at', '<', before)
      .whereNotExists(db('deliveries').select(db.raw('1')).whereRaw('deliveries.event_id = events.id'))
      .limit(batch)
      .select('id');
    const n = await db('events').whereIn('id', ids).delete();
    total += n;
    if (n < batch) return total;
  }
}
