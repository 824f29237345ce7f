import type { Knex } from 'knex';
import type { NewEvent } from './types.ts';
import { fanOut } from '../webhooks/fanout.ts';

/**
 * Writes events to the outbox in the caller's transaction (or connection), and with
 * them one delivery per matching active webhook (same transaction: an event and its
 * deliveries commit together or not at all). The payload bytes are fixed here: every
 * delivery of an event sends exactly these bytes. Returns the new event ids, in order.
 *
 * After the transaction commits, call notifyDeliveries() so the dispatcher sends at once.
 */
export async function recordEvents(db: Knex | Knex.Transaction, events: NewEvent[]): Promise<number[]> {
  // Events and their deliveries must commit together: open a transaction if the caller has none.
  if (!(db as Knex.Transaction).isTransaction) return db.transaction((trx) => recordEvents(trx, events));
  const ids: number[] = [];
  const now = Date.now();
  for (let i = 0; i < events.length; i += 500) {
    const rows = events.slice(i, i + 500).map((e) => ({
      repository_id: e.repositoryId,
      type: e.type,
      action: e.action ?? null,
      ref: e.ref ?? null,
      sender_id: e.senderId,
      payload: JSON.stringify(e.payload),
      created_at: now,
    }));
    const inserted = await db('events').insert(rows).returning('id');
    for (const row of inserted) ids.push(typeof row === 'object' ? row.id : row);
  }
  await fanOut(db, events, ids);
  return ids;
}
