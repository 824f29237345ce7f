import type { DeliveryStatus } from '../../webhooks/model.ts';

/** What happens after an attempt: the delivery's new status and, if pending, when it is next due. */
export interface NextStep {
  status: DeliveryStatus;
  nextAttemptAt: number | null;
}

/** Longest delay a receiver's Retry-After may add (it may only push the next attempt later; SPEC §5.5). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Reads a Retry-After header (seconds or an HTTP date) as milliseconds from `now`; null if absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** A 429's or 503's Retry-After as the time it names, or null (any other answer, or none). */
export function retryAfterAt(statusCode: number | null, value: string | undefined, endedAt: number): number | null {
  if (statusCode !== 429 && statusCode !== 503) return null;
  const ms = retryAfterMs(value, endedAt);
  return ms === null ? null : endedAt + ms;
}

/**
 * Decides after attempt number `attempts` (1-based): 2xx is success; 410 stops; after the
 * schedule's last attempt the delivery has failed for good; otherwise the next attempt
 * is `schedule[attempts]` after this one ended, or later when a 429/503 asked for more.
 */
export function nextStep(o: { statusCode: number | null; retryAfterMs: number | null; attempts: number; endedAt: number; schedule: number[] }): NextStep {
  const code = o.statusCode;
  if (code !== null && code >= 200 && code < 300) return { status: 'success', nextAttemptAt: null };
  if (code === 410 || o.attempts >= o.schedule.length) return { status: 'failed', nextAttemptAt: null };
  let delay = o.schedule[o.attempts];
  if ((code === 429 || code === 503) && o.retryAfterMs !== null) delay = Math.max(delay, o.retryAfterMs);
  return { status: 'pending', nextAttemptAt: o.endedAt + delay };
}
