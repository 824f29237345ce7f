import type { Db } from '../db/connect.ts';
import { countBy } from '../db/rows.ts';
import { DELIVERY_COLUMNS, toDelivery, type Delivery } from './deliveries.ts';
import type { DeliveryStatus } from './model.ts';

/** The counts a webhook's delivery list opens with. */
export interface DeliveryCounts {
  total: number;
  successful: number;
  failed: number;
  pending: number;
}

/** Counts a webhook's deliveries by status (every delivery, whatever the list's filter). */
export async function countDeliveries(db: Db, webhookId: number): Promise<DeliveryCounts> {
  const counts: DeliveryCounts = { total: 0, successful: 0, failed: 0, pending: 0 };
  for (const [status, n] of await countBy(db('deliveries').where('webhook_id', webhookId), 'status')) {
    counts.total += n;
    if (status === 'success') counts.successful += n;
    else if (status === 'failed') counts.failed += n;
    else if (status === 'pending') counts.pending += n;
  }
  return counts;
}

/**
 * One page of a webhook's deliveries, newest first. `before` is the id the previous
 * page ended at (the cursor); `next` is set when more deliveries follow.
 */
export async function listDeliveries(
  db: Db,
  webhookId: number,
  options: { status?: DeliveryStatus; limit: number; before?: number },
): Promise<{ deliveries: Delivery[]; next: number | null }> {
  const q = db('deliveries')
    .where('webhook_id', webhookId)
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .select(DELIVERY_COLUMNS);
  if (options.status) q.where('status', options.status);
  if (options.before !== undefined) q.where('id', '<', options.before);
  const rows = (await q).map(toDelivery);
  const more = rows.length > options.limit;
  const page = rows.slice(0, options.limit);
  return { deliveries: page, next: more ? page[page.length - 1].id : null };
}

/** The latest delivery of each webhook, for the records' `last_delivery`. */
export async function lastDeliveries(db: Db, webhookIds: number[]): Promise<Map<number, Delivery>> {
  const found = new Map<number, Delivery>();
  if (webhookIds.length === 0) return found;
  const latest = db('deliveries').whereIn('webhook_id', webhookIds).groupBy('webhook_id').max({ id: 'id' });
  for (const row of await db('deliveries').whereIn('id', latest.clone().select()).select(DELIVERY_COLUMNS)) {
    const d = toDelivery(row);
    found.set(d.webhook_id, d);
  }
  return found;
}

/**
 * Queues a redelivery of a finished delivery: a new row with the same guid and the same
 * body (the event reference or the ping bytes), `redelivery_of` pointing back. Returns
 * 'pending' when the original has not finished (the caller answers 409).
 */
export async function redeliver(db: Db, original: Delivery): Promise<Delivery | 'pending'> {
  return db.transaction(async (trx) => {
    const row = await trx('deliveries').where('id', original.id).first('status', 'payload', 'event_id');
    if (!row || row.status === 'pending') return 'pending' as const;
    const now = Date.now();
    const [ins] = await trx('deliveries')
      .insert({
        webhook_id: original.webhook_id,
        event_id: row.event_id,
        payload: row.payload,
        guid: original.guid,
        event: original.event,
        action: original.action,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        redelivery: true,
        redelivery_of: original.id,
        created_at: now,
      })
      .returning('id');
    const id = Number(typeof ins === 'object' ? ins.id : ins);
    return toDelivery(await trx('deliveries').where('id', id).first(DELIVERY_COLUMNS));
  });
}
