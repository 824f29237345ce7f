import type { Db } from '../db/connect.ts';
import { countRows } from '../db/rows.ts';

/** A record whose node died while recording it this many times is parked instead of run again. */
export const MAX_INTERRUPTIONS = 3;

/**
 * Whether a failed attempt failed for a reason of the record's own, one that every retry
 * would meet again: a Postgres data exception (SQLSTATE class 22, such as 22001 for a
 * value longer than its column) or SQLite's equivalents. Connection errors, timeouts,
 * locks and git failures are not: they may pass, and keep the retry with backoff.
 */
export function isPermanentFailure(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return false;
  return /^22[0-9A-Z]{3}$/.test(code) || code === 'SQLITE_TOOBIG' || code === 'SQLITE_MISMATCH';
}

/** Parks a record this node holds: never claimed again by itself; `reason` is kept as its error, after `parked: `. */
export async function parkPushRecord(db: Db, id: number, node: string, reason: string): Promise<void> {
  await db('push_records')
    .where({ id, locked_by: node })
    .update({ parked_at: Date.now(), locked_by: null, locked_at: null, last_error: `parked: ${reason}`.slice(0, 1000) });
}

/** Parked push records, of one repository or all. */
export async function parkedPushRecords(db: Db, repositoryId?: number): Promise<number> {
  const query = db('push_records').whereNotNull('parked_at');
  if (repositoryId !== undefined) query.where('repository_id', repositoryId);
  return countRows(query);
}
