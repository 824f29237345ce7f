import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { onSqlite, prepared } from './sqlite.ts';

/** A claimed delivery: what an attempt needs, with `attempts` already counting this one. */
export interface Claimed {
  id: number;
  webhook_id: number;
  event_id: number | null;
  payload: string | null;
  guid: string;
  event: string;
  attempts: number;
}

const RETURNING = 'id, webhook_id, event_id, payload, guid, event, attempts';

/**
 * Claims up to `limit` due deliveries for this process in ONE statement: the attempt is
 * counted and a lease taken (lease_owner, and next_attempt_at moved to the lease's end).
 *
 * Guarantee (at-least-once): the claim commits before any byte is sent. If the process
 * dies between this claim and the result write, the row stays `pending` with its
 * next_attempt_at at the lease's end, so it falls due again by itself and another claim
 * (this process after a restart, or any other) sends it again with the same guid.
 * Postgres: FOR UPDATE SKIP LOCKED lets several processes claim side by side, never the
 * same row. SQLite: writers are serialized, so one UPDATE … RETURNING is atomic.
 * `firstDelayMs` is the schedule's delay before attempt 1, counted from creation.
 */
export async function claimDue(db: Db, options: { owner: string; limit: number; now: number; leaseMs: number; firstDelayMs: number }): Promise<Claimed[]> {
  const { owner, limit, now, leaseMs, firstDelayMs } = options;
  const first = firstDelayMs > 0 ? ' AND (attempts > 0 OR next_attempt_at <= ?)' : '';
  const firstArgs = firstDelayMs > 0 ? [now - firstDelayMs] : [];
  let rows: any[];
  if (isPostgres(db)) {
    const result = await db.raw(
      `UPDATE deliveries AS d
          SET attempts = d.attempts + 1, lease_owner = ?, next_attempt_at = ?
         FROM (SELECT id FROM deliveries
                WHERE status = 'pending' AND next_attempt_at <= ?${first}
                ORDER BY next_attempt_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED) AS due
        WHERE d.id = due.id
    RETURNING ${RETURNING.split(', ').map((c) => `d.${c}`).join(', ')}`,
      [owner, now + leaseMs, now, ...firstArgs, limit],
    );
    rows = result.rows;
  } else {
    // A prepared statement on the one connection (Knex would build and prepare it per call).
    const sql = `UPDATE deliveries
          SET attempts = attempts + 1, lease_owner = ?, next_attempt_at = ?
        WHERE id IN (SELECT id FROM deliveries
                      WHERE status = 'pending' AND next_attempt_at <= ?${first}
                      ORDER BY next_attempt_at
                      LIMIT ?)
    RETURNING ${RETURNING}`;
    rows = await onSqlite(db, (conn) => prepared(conn, sql).all(owner, now + leaseMs, now, ...firstArgs, limit));
  }
  return rows.map((r) => ({
    id: Number(r.id),
    webhook_id: Number(r.webhook_id),
    event_id: r.event_id == null ? null : Number(r.event_id),
    payload: r.payload ?? null,
    guid: r.guid,
    event: r.event,
    attempts: Number(r.attempts),
  }));
}
