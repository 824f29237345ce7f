import type { Db } from '../db/connect.ts';
import type { Claimed } from './claim.ts';
import { isPostgres } from '../db/connect.ts';
import { onSqlite, prepared } from './sqlite.ts';

/** What an attempt needs beyond the claimed row: the body bytes and the webhook's URL and secret. */
export interface Loaded {
  body: string;
  hookId: number;
  url: string;
  secret: string;
}

/**
 * Loads, in one query, the body (the delivery's own bytes for pings, else its event's)
 * and the current URL and secret of the webhook of each claimed delivery. A delivery
 * whose webhook was deleted meanwhile is missing from the answer: nothing to send.
 */
export async function loadClaimed(db: Db, claimed: Claimed[]): Promise<Map<number, Loaded>> {
  const found = new Map<number, Loaded>();
  const add = (rows: any[]) => {
    for (const r of rows) {
      const body = r.payload ?? r.event_payload;
      if (body != null) found.set(Number(r.id), { body, hookId: Number(r.hook_id), url: r.url, secret: r.secret });
    }
  };
  for (let i = 0; i < claimed.length; i += 500) {
    const ids = claimed.slice(i, i + 500).map((c) => c.id);
    if (isPostgres(db)) {
      add(await query(db, ids));
    } else {
      // SQLite: prepared once per batch size on the one connection, not rebuilt by Knex per call.
      const sql = `SELECT d.id, d.payload, e.payload AS event_payload, w.id AS hook_id, w.url, w.secret
                     FROM deliveries AS d JOIN webhooks AS w ON w.id = d.webhook_id LEFT JOIN events AS e ON e.id = d.event_id
                    WHERE d.id IN (${ids.map(() => '?').join(', ')})`;
      add(await onSqlite(db, (conn) => prepared(conn, sql).all(...ids)));
    }
  }
  return found;
}

function query(db: Db, ids: number[]) {
  return db('deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .leftJoin('events as e', 'e.id', 'd.event_id')
    .whereIn('d.id', ids)
    .select('d.id', 'd.payload', 'e.payload as event_payload', 'w.id as hook_id', 'w.url', 'w.secret');
}
