import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';
import type { DbBool, DbInt } from '../db/rows.ts';
import type { DeliveryStatus } from './model.ts';
import type { EventType } from '../events/types.ts';

/** A delivery row, parsed. */
export interface Delivery {
  id: number;
  webhook_id: number;
  event_id: number | null;
  guid: string;
  /** An event type, or `ping` (the stored column holds nothing else). */
  event: EventType | 'ping';
  action: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  redelivery: boolean;
  redelivery_of: number | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  last_attempt_at: number | null;
  created_at: number;
  /**
   * A dispatcher holds it now (its attempt is being sent, or waits its turn): while it does,
   * next_attempt_at is the end of that hold, not a next attempt.
   */
  sending: boolean;
}

/** What a delivery list may be narrowed to: a status, or `held` (pending, held while its webhook is paused or disabled, SPEC §5.5). */
export type DeliveryFilter = DeliveryStatus | 'held';

/** Narrows a query of `deliveries` (aliased `prefix`, if any) to a filter. */
export function whereFilter(q: Knex.QueryBuilder, filter: DeliveryFilter, prefix = ''): Knex.QueryBuilder {
  if (filter !== 'held') return q.where(`${prefix}status`, filter);
  // Held: pending with no next attempt (endpointHealth.ts), the same rule as heldCounts.
  return q.where(`${prefix}status`, 'pending').whereNull(`${prefix}next_attempt_at`);
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The result label of a delivery record (SPEC §5.3): `Success`, `Failed`, or null while pending. */
export function resultLabel(status: DeliveryStatus): 'Success' | 'Failed' | null {
  return status === 'success' ? 'Success' : status === 'failed' ? 'Failed' : null;
}

/** A `deliveries` row (DELIVERY_COLUMNS) as either driver gives it. */
interface DeliveryRow {
  id: DbInt;
  webhook_id: number;
  event_id: DbInt | null;
  guid: string;
  event: string;
  action: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: DbInt | null;
  redelivery: DbBool;
  redelivery_of: DbInt | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  last_attempt_at: DbInt | null;
  created_at: DbInt;
  lease_owner: string | null;
}

/** Parses a `deliveries` row from either dialect. */
export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: Number(row.id),
    webhook_id: Number(row.webhook_id),
    event_id: num(row.event_id),
    guid: row.guid,
    // Written only by the fan-out (an event's type) and pings.
    event: row.event as Delivery['event'],
    action: row.action ?? null,
    status: row.status,
    attempts: Number(row.attempts),
    next_attempt_at: num(row.next_attempt_at),
    redelivery: Boolean(row.redelivery),
    redelivery_of: num(row.redelivery_of),
    status_code: num(row.status_code),
    error: row.error ?? null,
    duration_ms: num(row.duration_ms),
    last_attempt_at: num(row.last_attempt_at),
    created_at: Number(row.created_at),
    // A hold past its end belongs to a node that died: the delivery is due again, not being sent.
    sending: row.status === 'pending' && row.lease_owner != null && row.next_attempt_at !== null && Number(row.next_attempt_at) > Date.now(),
  };
}

/** Columns a listing needs: everything but the payload bytes. */
export const DELIVERY_COLUMNS = [
  'id',
  'webhook_id',
  'event_id',
  'guid',
  'event',
  'action',
  'status',
  'attempts',
  'next_attempt_at',
  'redelivery',
  'redelivery_of',
  'status_code',
  'error',
  'duration_ms',
  'last_attempt_at',
  'created_at',
  'lease_owner',
];

/** The exact body bytes of each delivery: its own (pings) or its event's, fixed when the event happened. */
export async function deliveryBodies(db: Db, rows: { id: number; event_id: number | null; payload?: string | null }[]): Promise<Map<number, string>> {
  const bodies = new Map<number, string>();
  const eventIds = [...new Set(rows.filter((r) => r.payload == null && r.event_id != null).map((r) => Number(r.event_id)))];
  const payloads = new Map<number, string>();
  for (let i = 0; i < eventIds.length; i += 500) {
    for (const e of await db('events')
      .whereIn('id', eventIds.slice(i, i + 500))
      .select('id', 'payload'))
      payloads.set(Number(e.id), e.payload);
  }
  for (const r of rows) {
    const body = r.payload ?? (r.event_id != null ? payloads.get(Number(r.event_id)) : undefined);
    if (body !== undefined) bodies.set(Number(r.id), body);
  }
  return bodies;
}

/** One attempt as the delivery detail shows it. */
export interface AttemptDetail {
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  request_headers: Record<string, string>;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

/** A `delivery_attempts` row as either driver gives it. */
interface AttemptRow {
  attempt: number;
  started_at: DbInt;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  /** JSON objects of header names and values. */
  request_headers: string;
  response_headers: string | null;
  response_body: string | null;
}

/** A delivery of a webhook by id, or undefined (a delivery of another webhook is not found). */
export async function findDelivery(db: Db, webhookId: number, id: number): Promise<Delivery | undefined> {
  const row = await db('deliveries').where({ id, webhook_id: webhookId }).first(DELIVERY_COLUMNS);
  return row ? toDelivery(row) : undefined;
}

/** Every attempt of a delivery, first first. */
export async function attemptsOf(db: Db, deliveryId: number): Promise<AttemptDetail[]> {
  const rows: AttemptRow[] = await db('delivery_attempts').where('delivery_id', deliveryId).orderBy('attempt').orderBy('id');
  return rows.map((r) => ({
    attempt: Number(r.attempt),
    started_at: Number(r.started_at),
    duration_ms: Number(r.duration_ms),
    status_code: num(r.status_code),
    error: r.error ?? null,
    request_headers: JSON.parse(r.request_headers),
    response_headers: r.response_headers ? JSON.parse(r.response_headers) : null,
    response_body: r.response_body ?? null,
  }));
}

/** The body a delivery sends, or null when its event is gone. */
export async function bodyOf(db: Db, id: number): Promise<string | null> {
  const row = await db('deliveries').where('id', id).first('id', 'event_id', 'payload');
  if (!row) return null;
  return (await deliveryBodies(db, [row])).get(Number(row.id)) ?? null;
}
