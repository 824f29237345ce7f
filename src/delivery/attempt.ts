import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from '../config.ts';
import { MAX_CLAIMS, type Claimed } from './claim.ts';
import type { AttemptResult } from './complete.ts';
import type { DeliveryMetrics } from './metrics.ts';
import { nextStep, retryAfterMs } from './schedule.ts';
import { deliveryHeaders } from './sign.ts';
import { sendAttempt, target, type Outcome } from './send.ts';

/**
 * Makes the attempt of a claimed delivery and returns its result, ready to be written:
 * signs and sends it, decides the next step, counts it for /metrics and logs one line.
 * A delivery claimed more than MAX_CLAIMS times without a result (its attempts keep
 * dying with their process) is not sent again: its attempt is recorded as lost, a
 * failure like any other, so the schedule goes on and ends.
 */
export function attemptMaker(o: { config: Pick<Config, 'webhookTimeoutMs' | 'webhookRetrySchedule'>; agent: Dispatcher; metrics: DeliveryMetrics; log: Logger }) {
  // The attempt line is built from fixed, secret-free fields (the target is an origin, which
  // drops any user info), so it skips the logger's redaction, a third of a line's cost.
  const attemptLog = o.log.child({}, { redact: { paths: [] } });

  return async function attempt(c: Claimed): Promise<AttemptResult> {
    let headers: Record<string, string> = {};
    let outcome: Outcome;
    if (c.claims > MAX_CLAIMS) {
      const now = Date.now();
      outcome = { statusCode: null, error: 'lost: the process stopped during the attempt', responseHeaders: null, responseBody: null, startedAt: now, endedAt: now, durationMs: 0 };
    } else {
      o.metrics.inFlight += 1;
      try {
        // Throws when the secret's key is not loaded (a rotation while this node ran): the
        // place is freed here, and the lease running out brings the delivery back.
        headers = deliveryHeaders({ guid: c.guid, event: c.event, attempt: c.attempt, hookId: c.hookId, secret: c.secret, body: c.body, now: Date.now() });
        outcome = await sendAttempt(o.agent, c.url, headers, c.body, o.config.webhookTimeoutMs);
      } finally {
        o.metrics.inFlight -= 1;
      }
    }
    const step = nextStep({
      statusCode: outcome.statusCode,
      retryAfterMs: retryAfterMs(outcome.responseHeaders?.['retry-after'], outcome.endedAt),
      attempts: c.attempt,
      endedAt: outcome.endedAt,
      schedule: o.config.webhookRetrySchedule,
    });
    o.metrics.observe(step.status === 'success' ? 'success' : outcome.statusCode === null ? 'error' : 'failure', outcome.durationMs / 1000);
    // One line per attempt; the secret and the URL's path and query (which may carry tokens) stay out.
    attemptLog.info(
      { delivery_id: c.id, guid: c.guid, webhook_id: c.hookId, event: c.event, attempt: c.attempt, target: target(c.url).origin, status_code: outcome.statusCode, error: outcome.error, duration_ms: outcome.durationMs, result: step.status },
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
    };
  };
}
