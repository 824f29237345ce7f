import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import type { Config } from '../../config.ts';
import { disable, GONE_REASON, holdPending, lockHealth, MAX_PROBE_INTERVAL_MS, pause, resumeIn } from '../../webhooks/endpointHealth.ts';
import type { AttemptResult } from '../store/complete.ts';

/** What this process knows of a webhook's health beyond what its claims read. */
export interface LocalHealth {
  /** When this process saw the webhook turn paused or disabled: claims made before then are stale. */
  unhealthySince(hookId: number): number | undefined;
  /** A Retry-After this process was given for the webhook, not yet read back by a claim. */
  notBefore(hookId: number): number | undefined;
}

/** How an attempt's failure reads as a health reason: as its transport put it (`500 Internal Server Error`, `timeout`). */
function failureReason(r: Pick<AttemptResult, 'reason'>): string {
  return r.reason ?? 'failed';
}

/** Forget what this process saw after this long: by then every claim of that time is written. */
const LOCAL_MEMORY_MS = 10 * 60_000;

/**
 * Endpoint health accounting (SPEC §5.5), after each batch of results is written: counts
 * failed attempts in a row per webhook, pauses a webhook at WEBHOOK_PAUSE_AFTER, resumes a
 * paused one at its first 2xx (a probe's, or a ping's), backs its probes off after a failed
 * one, deactivates it when its receiver is gone (a 410) and keeps the time a receiver asked to be retried at (a Retry-After) for all its
 * deliveries. One transaction per webhook that needs it; a batch of successes of healthy
 * webhooks (their claims read nothing to heed) costs nothing. Each change is logged.
 */
export function createHealthKeeper(o: {
  db: Db;
  config: Pick<Config, 'webhookPauseAfter' | 'webhookProbeAfterMs'>;
  log: Logger;
  /** Deliveries fell due (a resume released them). */
  released: () => void;
}) {
  const unhealthy = new Map<number, number>();
  const waits = new Map<number, number>();
  /** Webhooks this process counted failures of: a success of theirs must reset the count even if its claim read none. */
  const failingHere = new Set<number>();

  function forgetOld(now: number) {
    for (const [id, at] of unhealthy) if (at < now - LOCAL_MEMORY_MS) unhealthy.delete(id);
    for (const [id, at] of waits) if (at < now) waits.delete(id);
  }

  async function account(hookId: number, results: AttemptResult[], now: number): Promise<void> {
    const ordered = [...results].sort((a, b) => a.endedAt - b.endedAt);
    const lastSuccess = ordered.map((r) => r.status).lastIndexOf('success');
    const failures = ordered.filter((r) => r.status !== 'success');
    const trailing = ordered.length - 1 - lastSuccess;
    const gone = failures.some((r) => r.outcome === 'gone');
    const retryAfter = Math.max(0, ...ordered.map((r) => r.retryAfterAt ?? 0));
    const lastFailure = failures.at(-1);
    const change = await o.db.transaction(async (trx) => {
      const cur = await lockHealth(trx, hookId);
      if (!cur) return null;
      const failing = lastSuccess >= 0 ? trailing : cur.failing + failures.length;
      const patch: Record<string, unknown> = { failing_attempts: failing };
      if (retryAfter > (cur.notBefore ?? 0)) patch.not_before = retryAfter;
      await trx('webhooks').where('id', hookId).update(patch);
      if (gone && cur.state !== 'disabled') {
        await disable(trx, hookId, { now, reason: GONE_REASON });
        return { to: 'disabled', reason: GONE_REASON } as const;
      }
      if (cur.state === 'paused' && lastSuccess >= 0) {
        const released = await resumeIn(trx, hookId, now);
        return { to: 'healthy', released } as const;
      }
      if (cur.state === 'healthy' && failing >= o.config.webhookPauseAfter && lastFailure) {
        const reason = failureReason(lastFailure);
        await pause(trx, hookId, { now, reason, probeAfterMs: o.config.webhookProbeAfterMs, failing });
        return { to: 'paused', reason, failing } as const;
      }
      if (cur.state !== 'paused' && cur.state !== 'disabled') return null;
      const probe = cur.probeDeliveryId === null ? undefined : failures.find((r) => r.deliveryId === cur.probeDeliveryId);
      if (probe) {
        // The probe failed: hold its delivery again and wait twice as long for the next one.
        const interval = Math.min(2 * (cur.probeIntervalMs ?? o.config.webhookProbeAfterMs), MAX_PROBE_INTERVAL_MS);
        await trx('webhooks')
          .where('id', hookId)
          .update({ probe_at: now + interval, probe_interval_ms: interval, probe_delivery_id: null });
        await holdPending(trx, hookId);
        return { to: 'probe_failed', reason: failureReason(probe), nextProbeAt: now + interval } as const;
      }
      // Attempts that were in flight when it paused came back pending: they are held too.
      await holdPending(trx, hookId, cur.probeDeliveryId);
      return null;
    });
    if (retryAfter > now) waits.set(hookId, retryAfter);
    if (failures.length > 0 && lastSuccess < 0) failingHere.add(hookId);
    else failingHere.delete(hookId);
    if (!change) return;
    if (change.to === 'healthy') {
      unhealthy.delete(hookId);
      o.log.info({ webhook_id: hookId, held_released: change.released }, 'webhook resumed: a probe succeeded; %d held deliveries released', change.released);
      o.released();
    } else if (change.to === 'paused') {
      unhealthy.set(hookId, now);
      o.log.warn(
        { webhook_id: hookId, reason: change.reason, failed_in_a_row: change.failing },
        'webhook paused after %d failed attempts in a row',
        change.failing,
      );
    } else if (change.to === 'disabled') {
      unhealthy.set(hookId, now);
      o.log.warn({ webhook_id: hookId, reason: change.reason }, 'webhook disabled: its receiver answered 410 Gone');
    } else {
      o.log.info({ webhook_id: hookId, reason: change.reason, next_probe_at: new Date(change.nextProbeAt).toISOString() }, 'webhook probe failed');
    }
  }

  return {
    /** True while this process knows nothing beyond its claims: a claim that read nothing to heed goes straight to its attempt. */
    get quiet() {
      return unhealthy.size === 0 && waits.size === 0;
    },
    local: {
      unhealthySince: (hookId: number) => unhealthy.get(hookId),
      notBefore: (hookId: number) => waits.get(hookId),
    } satisfies LocalHealth,

    /** Accounts a written batch of results. */
    async afterResults(results: AttemptResult[]): Promise<void> {
      const needed = (r: AttemptResult) => r.status !== 'success' || r.health !== null || r.retryAfterAt !== null;
      // The common batch (successes of healthy webhooks) is looked at once and left.
      if (failingHere.size === 0 && !results.some(needed)) return;
      const byHook = new Map<number, AttemptResult[]>();
      for (const r of results) {
        const list = byHook.get(r.hookId);
        if (list) list.push(r);
        else byHook.set(r.hookId, [r]);
      }
      const now = Date.now();
      forgetOld(now);
      for (const [hookId, batch] of byHook) {
        const heed = batch.some(needed) || failingHere.has(hookId);
        if (heed) await account(hookId, batch, now);
      }
    },
  };
}
