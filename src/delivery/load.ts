import type { Db } from '../db/connect.ts';
import type { Claimed } from './claim.ts';

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
  for (let i = 0; i < claimed.length; i += 500) {
    const rows = await db('deliveries as d')
      .join('webhooks as w', 'w.id', 'd.webhook_id')
      .leftJoin('events as e', 'e.id', 'd.event_id')
      .whereIn('d.id', claimed.slice(i, i + 500).map((c) => c.id))
      .select('d.id', 'd.payload', 'e.payload as event_payload', 'w.id as hook_id', 'w.url', 'w.secret');
    for (const r of rows) {
      const body = r.payload ?? r.event_payload;
      if (body != null) found.set(Number(r.id), { body, hookId: Number(r.hook_id), url: r.url, secret: r.secret });
    }
  }
  return found;
}
