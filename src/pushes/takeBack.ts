import type { Db } from '../db/connect.ts';

/** The distinct names holding claims on push records (to tell which belong to this node's dead runs). */
export async function pushRecordHolders(db: Db): Promise<string[]> {
  const rows: Array<{ locked_by: string }> = await db('push_records').whereNotNull('locked_by').distinct('locked_by');
  return rows.map((r) => r.locked_by);
}

/**
 * Takes back, at start, the claims `holders` held: runs of this node that are gone (it
 * died while recording them). Each counts an interruption, so a record that kills its
 * node is parked after MAX_INTERRUPTIONS (parking.ts). A crash during this statement
 * changes nothing (one UPDATE): the next start takes them back, or their leases run out.
 */
export async function takeBackPushRecords(db: Db, holders: string[]): Promise<number> {
  if (holders.length === 0) return 0;
  return db('push_records')
    .whereIn('locked_by', holders)
    .update({ locked_by: null, locked_at: null, interruptions: db.raw('interruptions + 1') });
}
