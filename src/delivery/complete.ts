import type { Db } from '../db/connect.ts';
import type { DeliveryStatus } from '../webhooks/model.ts';

/** The outcome of one attempt, ready to be written. */
export interface AttemptResult {
  deliveryId: number;
  attempt: number;
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
}

/**
 * Writes attempt results, many in one transaction. A result is written only while this
 * process still holds the delivery's lease for that attempt (lease_owner and attempts
 * match): a process may only finish or reschedule what it claimed.
 *
 * Guarantee (at-least-once): the receiver may already have the delivery when this runs.
 * If the process dies before this commits, the lease runs out and the delivery is sent
 * again with the same X-Service-Delivery guid; receivers dedupe on it. A result whose
 * lease was lost (the webhook was deleted, or the lease ran out and another process
 * took the delivery) is dropped, as its row now belongs to someone else or to no one.
 * Returns how many results were written.
 */
export async function recordResults(db: Db, owner: string, results: AttemptResult[]): Promise<number> {
  if (results.length === 0) return 0;
  return db.transaction(async (trx) => {
    const attempts: Record<string, unknown>[] = [];
    for (const r of results) {
      const n = await trx('deliveries')
        .where({ id: r.deliveryId, lease_owner: owner, attempts: r.attempt, status: 'pending' })
        .update({
          status: r.status,
          next_attempt_at: r.nextAttemptAt,
          lease_owner: null,
          status_code: r.statusCode,
          error: r.error,
          duration_ms: r.durationMs,
          last_attempt_at: r.startedAt,
          finished_at: r.status === 'pending' ? null : r.endedAt,
        });
      if (n === 0) continue;
      attempts.push({
        delivery_id: r.deliveryId,
        attempt: r.attempt,
        started_at: r.startedAt,
        duration_ms: r.durationMs,
        status_code: r.statusCode,
        error: r.error,
        request_headers: JSON.stringify(r.requestHeaders),
        response_headers: r.responseHeaders ? JSON.stringify(r.responseHeaders) : null,
        response_body: r.responseBody,
      });
    }
    for (let i = 0; i < attempts.length; i += 200) await trx('delivery_attempts').insert(attempts.slice(i, i + 200));
    return attempts.length;
  });
}
