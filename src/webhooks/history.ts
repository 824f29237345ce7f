import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { wake, type DomainContext } from '../services.ts';
import { countBy } from '../db/rows.ts';
import { DELIVERY_COLUMNS, toDelivery, whereFilter, type Delivery, type DeliveryFilter } from './deliveries.ts';
import { insertedId } from '../db/results.ts';

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
  options: { status?: DeliveryFilter; limit: number; before?: number },
): Promise<{ deliveries: Delivery[]; next: number | null }> {
  const q = db('deliveries')
    .where('webhook_id', webhookId)
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .select(DELIVERY_COLUMNS);
  if (options.status) whereFilter(q, options.status);
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
 * 'pending' when the original has not finished (the caller answers 409). Wakes the
 * dispatcher once it is committed.
 */
export async function redeliver(context: DomainContext, original: Delivery): Promise<Delivery | 'pending'> {
  const copy = await context.db.transaction(async (trx) => {
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
    const id = insertedId(ins);
    return toDelivery(await trx('deliveries').where('id', id).first(DELIVERY_COLUMNS));
  });
  if (copy !== 'pending') wake(context).deliveries();
  return copy;
}

/** At most this many deliveries are redelivered by one bulk redelivery (SPEC §5.2); the rest are counted as `remaining`. */
export const MAX_BULK_REDELIVERIES = 10_000;

/** Which finished deliveries a bulk redelivery takes: failed ones whose end lies in [since, until] (epoch ms). */
export interface RedeliveryWindow {
  since: number;
  until: number;
}

/**
 * The deliveries of one webhook a bulk redelivery takes: `failed`, finished within the
 * window, and not redelivered yet (no later delivery of the webhook carries their guid).
 * A failed redelivery is itself taken again; its original, now followed by it, is not.
 */
function redeliverable(db: Knex | Knex.Transaction, webhookId: number, window: RedeliveryWindow) {
  return db('deliveries as d')
    .where('d.webhook_id', webhookId)
    .where('d.status', 'failed')
    .whereBetween('d.finished_at', [window.since, window.until])
    .whereNotExists(
      db('deliveries as later').select(db.raw('1')).where('later.webhook_id', webhookId).whereRaw('later.guid = d.guid').whereRaw('later.id > d.id'),
    );
}

/**
 * Redelivers, in one transaction, every failed delivery of a webhook that finished in
 * the window and was not redelivered yet, oldest first, at most `limit`
 * (MAX_BULK_REDELIVERIES): each gets a new delivery exactly as redeliver() makes one
 * (same guid, same bytes, `redelivery: true`, `redelivery_of`). Returns how many were
 * redelivered and how many matching ones remain (for the next call). Calling it again
 * redelivers nothing already redelivered. Concurrent calls for one webhook are
 * serialized (the webhook's row locked on Postgres; SQLite's write lock), so two never
 * redeliver the same delivery. Wakes the dispatcher when it redelivered any.
 */
export async function redeliverFailed(
  context: DomainContext,
  webhookId: number,
  window: RedeliveryWindow,
  limit: number = MAX_BULK_REDELIVERIES,
): Promise<{ redelivered: number; remaining: number }> {
  const { db } = context;
  const outcome = await db.transaction(async (trx) => {
    if (isPostgres(db)) await trx('webhooks').where('id', webhookId).forUpdate().first('id');
    const now = Date.now();
    const chosen = redeliverable(trx, webhookId, window)
      .orderBy('d.id')
      .limit(limit)
      .select(
        'd.webhook_id',
        'd.event_id',
        'd.payload',
        'd.guid',
        'd.event',
        'd.action',
        trx.raw("'pending'"),
        trx.raw('0'),
        trx.raw(String(now)), // an integer written inline: Postgres would type a parameter here as text
        trx.raw(isPostgres(db) ? 'true' : '1'),
        'd.id',
        trx.raw(String(now)), // an integer written inline: Postgres would type a parameter here as text
      );
    // Counted first: the transaction holds the webhook, so what matches now is what the insert takes from.
    const [{ count }] = await redeliverable(trx, webhookId, window).count({ count: '*' });
    const matching = Number(count);
    const redelivered = Math.min(matching, limit);
    if (redelivered > 0) {
      const select = chosen.toSQL();
      await trx.raw(`INSERT INTO deliveries (${INSERTED_COLUMNS.join(', ')}) ${select.sql}`, select.bindings);
    }
    return { redelivered, remaining: matching - redelivered };
  });
  if (outcome.redelivered > 0) wake(context).deliveries();
  return outcome;
}

/** The columns a bulk redelivery writes, in the order its SELECT gives them. */
const INSERTED_COLUMNS = [
  'webhook_id',
  'event_id',
  'payload',
  'guid',
  'event',
  'action',
  'status',
  'attempts',
  'next_attempt_at',
  'redelivery',
  'redelivery_of',
  'created_at',
];
