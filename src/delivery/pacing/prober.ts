import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { isPostgres } from '../../db/connect.ts';
import type { Config } from '../../config.ts';
import { disable, failHeld } from '../../webhooks/endpointHealth.ts';

/** How often each process looks for probes due, webhooks paused too long and stray held deliveries. */
export const HEALTH_TICK_MS = 1000;

/**
 * Makes the probes due (SPEC §5.5): for each paused webhook whose probe time has come, its
 * oldest held delivery becomes its one probe, due now, and the probe time moves to the
 * probe's lease end, so no other process (or tick) sends another until it is answered (the
 * answer sets the next time, healthKeeper.ts) or the lease runs out (its node died). Postgres:
 * SKIP LOCKED, so two processes never take the same webhook. A paused webhook holding
 * nothing is looked at again after its interval. Returns how many probes were made due.
 */
export async function makeProbesDue(db: Db, now: number, leaseMs: number): Promise<number> {
  return db.transaction(async (trx) => {
    const query = trx('webhooks').where('health_state', 'paused').where('probe_at', '<=', now).select('id', 'probe_interval_ms').orderBy('id').limit(100);
    const due = await (isPostgres(trx) ? query.forUpdate().skipLocked() : query);
    let made = 0;
    for (const hook of due) {
      const held = await trx('deliveries').where({ webhook_id: hook.id, status: 'pending' }).whereNull('next_attempt_at').orderBy('id').first('id');
      if (!held) {
        await trx('webhooks')
          .where('id', hook.id)
          .update({ probe_at: now + Number(hook.probe_interval_ms ?? 60_000) });
        continue;
      }
      await trx('webhooks')
        .where('id', hook.id)
        .update({ probe_at: now + leaseMs, probe_delivery_id: held.id });
      await trx('deliveries').where('id', held.id).update({ next_attempt_at: now });
      made += 1;
    }
    return made;
  });
}

/** The held deliveries of the webhook whose id is the column `hookColumn` (for EXISTS). */
function heldOf(db: Db | Knex.Transaction, hookColumn: string) {
  return db('deliveries')
    .whereRaw('deliveries.webhook_id = ??', [hookColumn])
    .where('deliveries.status', 'pending')
    .whereNull('deliveries.next_attempt_at')
    .select(db.raw('1'));
}

/**
 * Webhooks paused for WEBHOOK_DISABLE_AFTER are deactivated (disabled by Wharf): their
 * held deliveries stay held, as do those of every event after, until an owner reactivates
 * the webhook (sent then from the attempt they have not made, in order of creation). What
 * a disabled webhook holds is bounded by DELIVERY_RETENTION: a held delivery created
 * longer ago ends `failed` with `webhook disabled` (bulk redelivery brings it back).
 * Returns the webhooks deactivated now and those whose held deliveries ended.
 */
export async function disableStale(
  db: Db,
  now: number,
  o: { disableAfterMs: number; retentionMs: number },
): Promise<{ id: number; reason: string | null; disabled: boolean; failed: number }[]> {
  return db.transaction(async (trx) => {
    const expired = now - o.retentionMs;
    const query = trx('webhooks')
      .where((q) =>
        q
          .where((p) => p.where('health_state', 'paused').where('health_since', '<=', now - o.disableAfterMs))
          // Disabled and holding a delivery past retention: a disabled webhook holding nothing that old has nothing to end.
          .orWhere((d) => d.where('health_state', 'disabled').whereExists(heldOf(trx, 'webhooks.id').where('deliveries.created_at', '<', expired))),
      )
      .select('id', 'health_state', 'health_reason')
      .orderBy('id')
      .limit(100);
    // Postgres: each stale webhook is handled by one process.
    const stale = await (isPostgres(trx) ? query.forUpdate().skipLocked() : query);
    const out: { id: number; reason: string | null; disabled: boolean; failed: number }[] = [];
    for (const hook of stale) {
      const id = Number(hook.id);
      const disabled = hook.health_state === 'paused';
      if (disabled) await disable(trx, id, { now, reason: `paused too long (${hook.health_reason ?? 'failing'})` });
      const failed = await failHeld(trx, [id], now, expired);
      if (disabled || failed > 0) out.push({ id, reason: hook.health_reason, disabled, failed });
    }
    return out;
  });
}

/**
 * Held deliveries of a webhook that is healthy again: a claim that read the webhook
 * paused just before it resumed may hold a delivery after the resume released the
 * others. Released here, at the next tick.
 */
export async function releaseStray(db: Db, now: number): Promise<number> {
  return db('deliveries')
    .where('status', 'pending')
    .whereNull('next_attempt_at')
    .whereIn('webhook_id', db('webhooks').where('health_state', 'healthy').select('id'))
    .update({ next_attempt_at: now });
}

/** The endpoint health tick of one process: every HEALTH_TICK_MS, the three chores above. */
export function createProber(o: {
  db: Db;
  config: Pick<Config, 'webhookDisableAfterMs' | 'webhookTimeoutMs' | 'deliveryRetentionMs'>;
  log: Logger;
  due: () => void;
}) {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  // A probe's lease: longer than its attempt may take, so only a dead node's probe is made again.
  const leaseMs = 2 * o.config.webhookTimeoutMs + 30_000;

  async function tick() {
    if (running) return;
    running = true;
    try {
      const now = Date.now();
      // Two indexed reads decide whether there is anything to do: most ticks write nothing.
      let due = 0;
      const paused = Boolean(await o.db('webhooks').where('health_state', 'paused').first('id'));
      const held = Boolean(await o.db('deliveries').where('status', 'pending').whereNull('next_attempt_at').first('id'));
      if (paused || held) {
        for (const d of await disableStale(o.db, now, { disableAfterMs: o.config.webhookDisableAfterMs, retentionMs: o.config.deliveryRetentionMs })) {
          if (d.disabled)
            o.log.warn({ webhook_id: d.id, reason: d.reason }, 'webhook disabled: paused too long; its deliveries stay held until it is reactivated');
          if (d.failed > 0)
            o.log.warn({ webhook_id: d.id, held_failed: d.failed }, 'disabled webhook: %d held deliveries older than DELIVERY_RETENTION failed', d.failed);
        }
      }
      if (paused) due += await makeProbesDue(o.db, now, leaseMs);
      if (held) due += await releaseStray(o.db, now);
      if (due > 0) o.due();
    } catch (err) {
      o.log.warn({ err }, 'endpoint health tick failed');
    } finally {
      running = false;
    }
  }

  return {
    start() {
      timer = setInterval(() => void tick(), HEALTH_TICK_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
