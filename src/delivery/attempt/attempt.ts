import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from '../../config.ts';
import { PARK_AFTER, type Claimed } from '../store/claim.ts';
import type { AttemptResult } from '../store/complete.ts';
import type { DeliveryMetrics } from './metrics.ts';
import { nextStep, retryAfterAt } from '../pacing/schedule.ts';
import { deliveryHeaders } from './sign.ts';
import { sendAttempt, target } from './send.ts';
import { createIsolationGate } from './isolation.ts';
import { openCustomHeaders } from '../../webhooks/headers.ts';

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

/**
 * Makes the attempt of a claimed delivery and returns its result, ready to be written:
 * signs and sends it, decides the next step, counts it for /metrics and logs one line.
 * A delivery whose node died PARK_AFTER times during its attempts is parked instead:
 * not sent, its attempt recorded as failed with PARKED_ERROR, nothing scheduled (so no
 * delivery can crash nodes in a loop). A delivery interrupted before has its attempt
 * marked started (`markInFlight`, which also renews its lease) before it is sent, and
 * is not sent when its claim was taken over meanwhile. One death short of parking, it is
 * sent with no other attempt of this process in flight (isolation.ts), so deliveries
 * that were in flight beside a culprit at its first deaths are not parked with it.
 */
export function attemptMaker(o: {
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookRetrySchedule'>;
  agent: Dispatcher;
  metrics: DeliveryMetrics;
  log: Logger;
  markInFlight: (c: Claimed) => Promise<boolean>;
}) {
  // The attempt line is built from fixed, secret-free fields (the target is an origin, which
  // drops any user info), so it skips the logger's redaction, a third of a line's cost.
  const attemptLog = o.log.child({}, { redact: { paths: [] } });
  const gate = createIsolationGate();

  return async function attempt(c: Claimed): Promise<AttemptResult> {
    if (c.interruptions >= PARK_AFTER) return parked(o.log, c);
    const suspect = c.claims > 1;
    // One death short of parking: sent alone, so only a culprit can die with it a last time.
    const alone = c.interruptions >= PARK_AFTER - 1;
    const sent = await gate(alone, async () => {
      if (suspect && !(await o.markInFlight(c))) throw new Error('the delivery was claimed by another process');
      o.metrics.inFlight += 1;
      try {
        // Throws when the secret's (or the custom headers') key is not loaded (a rotation while this node ran): the
        // place is freed here, and the lease running out brings the delivery back.
        const signed = deliveryHeaders({
          guid: c.guid,
          event: c.event,
          attempt: c.attempt,
          hookId: c.hookId,
          secret: c.secret,
          body: c.body,
          now: Date.now(),
          github: c.github,
        });
        if (c.headers === null) return { signed, outcome: await sendAttempt(o.agent, c.url, signed, c.body, o.config.webhookTimeoutMs) };
        // Custom headers go after Wharf's own (their names never clash: reserved ones are refused);
        // the attempt records them with masked values.
        const custom = openCustomHeaders(c.headers);
        const outcome = await sendAttempt(o.agent, c.url, { ...signed, ...custom.send }, c.body, o.config.webhookTimeoutMs);
        return { signed: { ...signed, ...custom.recorded }, outcome };
      } finally {
        o.metrics.inFlight -= 1;
      }
    });
    const { signed: headers, outcome } = sent;
    const retryAfter = retryAfterAt(outcome.statusCode, outcome.responseHeaders?.['retry-after'], outcome.endedAt);
    const step = nextStep({
      statusCode: outcome.statusCode,
      retryAfterMs: retryAfter === null ? null : retryAfter - outcome.endedAt,
      attempts: c.attempt,
      endedAt: outcome.endedAt,
      schedule: o.config.webhookRetrySchedule,
    });
    o.metrics.observe(step.status === 'success' ? 'success' : outcome.statusCode === null ? 'error' : 'failure', outcome.durationMs / 1000);
    // One line per attempt; the secret and the URL's path and query (which may carry tokens) stay out.
    attemptLog.info(
      {
        delivery_id: c.id,
        guid: c.guid,
        webhook_id: c.hookId,
        event: c.event,
        attempt: c.attempt,
        target: target(c.url).origin,
        status_code: outcome.statusCode,
        error: outcome.error,
        duration_ms: outcome.durationMs,
        result: step.status,
      },
      'delivery attempt',
    );
    return {
      deliveryId: c.id,
      attempt: c.attempt,
      claims: c.claims,
      status: step.status,
      nextAttemptAt: step.nextAttemptAt,
      startedAt: outcome.startedAt,
      endedAt: outcome.endedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      requestHeaders: headers,
      responseHeaders: outcome.responseHeaders,
      responseBody: outcome.responseBody,
      hookId: c.hookId,
      health: c.health,
      retryAfterAt: retryAfter,
    };
  };
}
