import type { Db } from '../db/connect.ts';

/**
 * Deletes a push record whose repository was deleted since it landed: there is no one
 * to tell. A crash before this delete leaves the record, which the next claim finds
 * repository-less again and deletes then.
 */
export async function dropOrphanPushRecord(db: Db, id: number): Promise<void> {
  await db('push_records').where('id', id).delete();
}
