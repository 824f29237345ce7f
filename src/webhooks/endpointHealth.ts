import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { wake, type DomainContext } from '../services.ts';

/**
 * Endpoint health (SPEC §5.5), the stored side: pausing, resuming and disabling a
 * webhook, and holding and releasing its deliveries. A held delivery is `pending` with no
 * `next_attempt_at`: no claim can take it, so it spends no attempt and runs no schedule,
 * until a probe makes it due or a resume releases it. Each change is one transaction
 * with the webhook's row, so a crash leaves either the old state or the new one whole.
 */

/** The error a held delivery ends with when its webhook is disabled for good. */
export const DISABLED_ERROR = 'webhook disabled';

/** The reason a `410 Gone` answer gives. */
export const GONE_REASON = '410 Gone';

/** The longest wait between two probes of a paused webhook. */
export const MAX_PROBE_INTERVAL_MS = 3_600_000;

type Trx = Knex | Knex.Transaction;

/** Locks a webhook's row for a health change (Postgres; SQLite's writers are serialized) and reads its state. */
export async function lockHealth(trx: Trx, hookId: number) {
  const query = trx('webhooks').where('id', hookId).first('health_state', 'failing_attempts', 'not_before', 'probe_interval_ms', 'probe_delivery_id');
  const row = await (isPostgres(trx) ? query.forUpdate() : query);
  if (!row) return undefined;
  return {
    state: String(row.health_state) as 'healthy' | 'paused' | 'disabled',
    failing: Number(row.failing_attempts),
    notBefore: row.not_before == null ? null : Number(row.not_before),
    probeIntervalMs: row.probe_interval_ms == null ? null : Number(row.probe_interval_ms),
    probeDeliveryId: row.probe_delivery_id == null ? null : Number(row.probe_delivery_id),
  };
}

/** Holds a webhook's pending deliveries that no claim holds now (those in flight are held by the gate when they come back), but `except`. */
export async function holdPending(trx: Trx, hookId: number, except: number | null = null): Promise<number> {
  const q = trx('deliveries').where({ webhook_id: hookId, status: 'pending' }).whereNull('lease_owner').whereNotNull('next_attempt_at');
  if (except !== null) q.whereNot('id', except);
  return q.update({ next_attempt_at: null });
}

/**
 * Makes a webhook's held deliveries due at once, in the order they were created: each is
 * given a time in the past that grows with its id, so claims (which take the earliest
 * first) send them in that order, each from the attempt it has not made yet.
 */
export async function releaseHeld(trx: Trx, hookId: number, now: number): Promise<number> {
  const held = () => trx('deliveries').where({ webhook_id: hookId, status: 'pending' }).whereNull('next_attempt_at');
  const row = await held().max({ top: 'id' }).first();
  if (row?.top == null) return 0;
  return held().update({ next_attempt_at: trx.raw('? + id', [now - Number(row.top)]) });
}

/** Pauses a healthy webhook: held deliveries, the first probe after `probeAfterMs`. */
export async function pause(trx: Trx, hookId: number, o: { now: number; reason: string; probeAfterMs: number; failing: number }): Promise<void> {
  await trx('webhooks')
    .where('id', hookId)
    .update({
      health_state: 'paused',
      health_since: o.now,
      health_reason: o.reason,
      failing_attempts: o.failing,
      probe_at: o.now + o.probeAfterMs,
      probe_interval_ms: o.probeAfterMs,
      probe_delivery_id: null,
    });
  await holdPending(trx, hookId);
}

/** Deactivates a webhook for its health (a 410, or paused too long): held deliveries stay held, and new ones are written held, until it is resumed or they pass DELIVERY_RETENTION. */
export async function disable(trx: Trx, hookId: number, o: { now: number; reason: string }): Promise<void> {
  await trx('webhooks').where('id', hookId).update({
    active: false,
    health_state: 'disabled',
    health_since: o.now,
    health_reason: o.reason,
    probe_at: null,
    probe_delivery_id: null,
    updated_at: o.now,
  });
  await holdPending(trx, hookId);
}

/** The columns a resume sets: healthy, nothing in a row, no wait (also an owner's deactivation: what Wharf decided no longer counts). */
export function healthy(now: number) {
  return {
    health_state: 'healthy',
    health_since: now,
    health_reason: null,
    failing_attempts: 0,
    not_before: null,
    probe_at: null,
    probe_interval_ms: null,
    probe_delivery_id: null,
  };
}

/** Resumes a paused webhook in the caller's transaction (a probe succeeded): healthy, its held deliveries released. */
export async function resumeIn(trx: Trx, hookId: number, now: number): Promise<number> {
  await trx('webhooks').where('id', hookId).update(healthy(now));
  return releaseHeld(trx, hookId, now);
}

/**
 * Resumes a webhook at once (`active: true` by PATCH or the UI's Resume button): active,
 * healthy, its held deliveries released in the order they were created. Returns the state it
 * was in and how many deliveries were released, or undefined when the webhook is gone; wakes
 * the dispatcher for what it released.
 */
export async function resumeWebhook(context: DomainContext, hookId: number, now = Date.now()): Promise<{ was: string; released: number } | undefined> {
  const { db, log } = context;
  const resumed = await db.transaction(async (trx) => {
    const current = await lockHealth(trx, hookId);
    if (!current) return undefined;
    await trx('webhooks')
      .where('id', hookId)
      .update({ active: true, updated_at: now, ...(current.state === 'healthy' ? { failing_attempts: 0 } : healthy(now)) });
    const released = current.state === 'healthy' ? 0 : await releaseHeld(trx, hookId, now);
    return { was: current.state, released };
  });
  if (resumed && resumed.was !== 'healthy') {
    log?.info(
      { webhook_id: hookId, was: resumed.was, held_released: resumed.released },
      'webhook resumed by its owner; %d held deliveries released',
      resumed.released,
    );
  }
  if (resumed && resumed.released > 0) wake(context).deliveries();
  return resumed;
}

/** Ends the held deliveries of these webhooks created before `createdBefore` `failed` with DISABLED_ERROR (bulk redelivery brings them back). */
export async function failHeld(trx: Trx, hookIds: number[], now: number, createdBefore: number): Promise<number> {
  if (hookIds.length === 0) return 0;
  return trx('deliveries')
    .whereIn('webhook_id', hookIds)
    .where('status', 'pending')
    .whereNull('next_attempt_at')
    .where('created_at', '<', createdBefore)
    .update({ status: 'failed', error: DISABLED_ERROR, finished_at: now, lease_owner: null });
}

/** How many deliveries each of these webhooks holds. */
export async function heldCounts(db: Db, hookIds: number[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  if (hookIds.length === 0) return counts;
  const rows = await db('deliveries')
    .whereIn('webhook_id', hookIds)
    .where('status', 'pending')
    .whereNull('next_attempt_at')
    .groupBy('webhook_id')
    .select('webhook_id', db.raw('COUNT(*) AS n'));
  for (const r of rows) counts.set(Number(r.webhook_id), Number(r.n));
  return counts;
}
