import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import { parseUpdates } from './log.ts';

/** A push whose events are not recorded yet, as the API shows it. */
export interface PendingPush {
  id: number;
  landedAt: number;
  refs: number;
  state: 'waiting' | 'failing' | 'parked';
  attempts: number;
  nextTryAt: number | null;
  lastError: string | null;
}

/** The columns of a `push_records` row pendingPushes reads, as either driver gives them. */
interface PendingRow {
  id: number;
  landed_at: DbInt;
  updates: string;
  attempts: number;
  next_try_at: DbInt;
  last_error: string | null;
  parked_at: DbInt | null;
}

/** The pushes of a repository not yet recorded as events (waiting, failing, or parked), oldest first, at most `limit`. */
export async function pendingPushes(db: Db, repositoryId: number, limit = 100): Promise<PendingPush[]> {
  const rows: PendingRow[] = await db('push_records')
    .where('repository_id', repositoryId)
    .orderBy('id')
    .limit(limit)
    .select('id', 'landed_at', 'updates', 'attempts', 'next_try_at', 'last_error', 'parked_at');
  return rows.map((r) => {
    const parked = r.parked_at !== null;
    const attempts = Number(r.attempts);
    return {
      id: Number(r.id),
      landedAt: Number(r.landed_at),
      refs: parseUpdates(String(r.updates)).length,
      state: parked ? 'parked' : attempts > 0 ? 'failing' : 'waiting',
      attempts,
      nextTryAt: parked ? null : Number(r.next_try_at),
      lastError: r.last_error === null ? null : String(r.last_error),
    };
  });
}
