import type { DeliveryStatus } from '../../webhooks/model.ts';
import type { OutcomeKind } from '../store/attemptRecord.ts';

/** What happens after an attempt: the delivery's new status and, if pending, when it is next due. */
export interface NextStep {
  status: DeliveryStatus;
  nextAttemptAt: number | null;
}

/**
 * Decides after attempt number `attempts` (1-based), from how it ended: delivered is
 * success; gone stops; after the schedule's last attempt the delivery has failed for good;
 * otherwise the next attempt is `schedule[attempts]` after this one ended, or later when
 * the receiver asked to be retried at `retryAt`.
 */
export function nextStep(o: { outcome: OutcomeKind; retryAt: number | null; attempts: number; endedAt: number; schedule: number[] }): NextStep {
  if (o.outcome === 'delivered') return { status: 'success', nextAttemptAt: null };
  if (o.outcome === 'gone' || o.attempts >= o.schedule.length) return { status: 'failed', nextAttemptAt: null };
  let delay = o.schedule[o.attempts];
  if (o.retryAt !== null) delay = Math.max(delay, o.retryAt - o.endedAt);
  return { status: 'pending', nextAttemptAt: o.endedAt + delay };
}
