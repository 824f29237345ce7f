import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { PARK_AFTER, type Claimed } from '../store/claim.ts';
import type { AttemptResult } from '../store/complete.ts';
import type { DeliveryMetrics } from './metrics.ts';
import { nextStep } from '../pacing/schedule.ts';
import { createIsolationGate } from './isolation.ts';
import { payloadFor } from './payload.ts';
import type { DeliveryOutcome, DeliveryTransport } from './transport.ts';

/** The error a parked delivery ends with: why, and what to do. */
export const PARKED_ERROR = `parked: the node sending this delivery stopped ${PARK_AFTER} times during its attempt; it will not be sent again by itself — redeliver it to try again`;

/** The result that parks `c`: its attempt failed with PARKED_ERROR, the delivery failed for good. */
function parked(log: Logger, c: Claimed): AttemptResult {
  const now = Date.now();
  log.error(
    { delivery_id: c.id, guid: c.guid, webhook_id: c.hookId, event: c.event, attempt: c.attempt, interruptions: c.interruptions },
    'delivery parked: its node stopped during its attempt %d times',
    c.interruptions,
  );
  return {
    deliveryId: c.id,
    attempt: c.attempt,
    claims: c.claims,
    status: 'failed',
    nextAttemptAt: null,
    outcome: 'failed',
    reason: PARKED_ERROR,
    startedAt: now,
    endedAt: now,
    durationMs: 0,
    statusCode: null,
    error: PARKED_ERROR,
    requestHeaders: {},
    responseHeaders: null,
    responseBody: null,
    hookId: c.hookId,
    health: c.health,
    retryAfterAt: null,
  };
}

/** How an attempt counts in /metrics: success, failure (the receiver answered no) or error (no answer). */
function metricOf(outcome: DeliveryOutcome): 'success' | 'failure' | 'error' {
  if (outcome.kind === 'delivered') return 'success';
  return outcome.kind === 'failed' && !outcome.answered ? 'error' : 'failure';
}

/**
 * Makes the attempt of a claimed delivery and returns its result, ready to be written:
 * takes its body from payloadFor, sends it through the transport, decides the next step
 * from the outcome, counts it for /metrics and logs one line.
 * A delivery whose node died PARK_AFTER times during its attempts is parked instead:
 * not sent, its attempt recorded as failed with PARKED_ERROR, nothing scheduled (so no
 * delivery can crash nodes in a loop). A delivery interrupted before has its attempt
 * marked started (`markInFlight`, which also renews its lease) before it is sent, and
 * is not sent when its claim was taken over meanwhile, and marked ended once it is answered
 * or given up, before the gate lets another attempt go. One death short of parking, it is
 * sent with no other attempt of this process in flight (isolation.ts), so deliveries
 * that were in flight beside a culprit at its first deaths are not parked with it.
 */
export function attemptMaker(o: {
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookRetrySchedule'>;
  transport: DeliveryTransport;
  metrics: DeliveryMetrics;
  log: Logger;
  /** Marks a claim's attempt started (true) or ended (false) in the database; false when the claim was taken over. */
  markInFlight: (c: Claimed, inFlight: boolean) => Promise<boolean>;
}) {
  // The attempt line is built from fixed, secret-free fields (the transport names the target
  // without secrets), so it skips the logger's redaction, a third of a line's cost.
  const attemptLog = o.log.child({}, { redact: { paths: [] } });
  const gate = createIsolationGate();

  return async function attempt(c: Claimed): Promise<AttemptResult> {
    if (c.interruptions >= PARK_AFTER) return parked(o.log, c);
    const suspect = c.claims > 1;
    // One death short of parking: sent alone, so only a culprit can die with it a last time.
    const alone = c.interruptions >= PARK_AFTER - 1;
    const body = payloadFor({ hookId: c.hookId, github: c.github }, { type: c.event, payload: c.body });
    const outcome = await gate(alone, async () => {
      if (suspect && !(await o.markInFlight(c, true))) throw new Error('the delivery was claimed by another process');
      o.metrics.inFlight += 1;
      try {
        // Rejects when the secret's (or the custom headers') key is not loaded (a rotation while this node ran): the
        // place is freed here, and the lease running out brings the delivery back.
        return await o.transport.send(c, body, o.config.webhookTimeoutMs);
      } finally {
        o.metrics.inFlight -= 1;
        // Ended, and marked so before the gate lets the next attempt alone go (which may be a culprit
        // that kills this node before this result is written): that death is not this attempt's.
        if (suspect) await o.markInFlight(c, false).catch((err: unknown) => o.log.warn({ err, delivery_id: c.id }, 'could not mark an attempt ended'));
      }
    });
    const { record } = outcome;
    const retryAt = outcome.kind === 'retryLater' ? outcome.retryAt : null;
    const step = nextStep({
      outcome: outcome.kind,
      retryAt,
      attempts: c.attempt,
      endedAt: record.endedAt,
      schedule: o.config.webhookRetrySchedule,
    });
    o.metrics.observe(metricOf(outcome), record.durationMs / 1000);
    // One line per attempt; the secret and the URL's path and query (which may carry tokens) stay out.
    attemptLog.info(
      {
        delivery_id: c.id,
        guid: c.guid,
        webhook_id: c.hookId,
        event: c.event,
        attempt: c.attempt,
        target: o.transport.describe(c),
        status_code: record.statusCode,
        error: record.error,
        duration_ms: record.durationMs,
        result: step.status,
      },
      'delivery attempt',
    );
    return {
      ...record,
      deliveryId: c.id,
      attempt: c.attempt,
      claims: c.claims,
      status: step.status,
      nextAttemptAt: step.nextAttemptAt,
      outcome: outcome.kind,
      reason: outcome.kind === 'delivered' ? null : outcome.reason,
      hookId: c.hookId,
      health: c.health,
      retryAfterAt: retryAt,
    };
  };
}
