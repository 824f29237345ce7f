import type { Knex } from 'knex';
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
 * Writes attempt results, many in one transaction and a hundred to a statement. A result is written only while this
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
    let written = 0;
    for (let i = 0; i < results.length; i += CHUNK) {
      const chunk = results.slice(i, i + CHUNK);
      const ids = await updateChunk(trx, owner, chunk);
      const kept = chunk.filter((r) => ids.has(r.deliveryId));
      if (kept.length > 0) await insertAttempts(trx, kept);
      written += kept.length;
    }
    return written;
  });
}

const CHUNK = 100;

/**
 * Multi-row VALUES, written by hand: Knex renders SQLite multi-row inserts as a chain of
 * SELECT … UNION ALL, which costs far more to prepare. The first row carries the casts
 * Postgres needs to type the parameters of every row; SQLite takes them as they are.
 */
function values(rows: Knex.Value[][], casts: string[]): { sql: string; bindings: Knex.Value[] } {
  const first = `(${casts.map((c) => `CAST(? AS ${c})`).join(', ')})`;
  const rest = `(${casts.map(() => '?').join(', ')})`;
  return { sql: `VALUES ${[first, ...rows.slice(1).map(() => rest)].join(', ')}`, bindings: rows.flat() };
}

/** One UPDATE … FROM (VALUES …) for a chunk of results (both dialects); returns the ids whose lease still matched. */
async function updateChunk(trx: Knex.Transaction, owner: string, chunk: AttemptResult[]): Promise<Set<number>> {
  const v = values(
    chunk.map((r) => [r.deliveryId, r.attempt, r.status, r.nextAttemptAt, r.statusCode, r.error, r.durationMs, r.startedAt, r.status === 'pending' ? null : r.endedAt]),
    ['bigint', 'integer', 'text', 'bigint', 'integer', 'text', 'integer', 'bigint', 'bigint'],
  );
  // VALUES columns are column1…column9 in both dialects.
  const result = await trx.raw(
    `UPDATE deliveries
        SET status = v.column3, next_attempt_at = v.column4, lease_owner = NULL, status_code = v.column5,
            error = v.column6, duration_ms = v.column7, last_attempt_at = v.column8, finished_at = v.column9
       FROM (${v.sql}) AS v
      WHERE deliveries.id = v.column1 AND deliveries.attempts = v.column2
        AND deliveries.lease_owner = ? AND deliveries.status = 'pending'
  RETURNING deliveries.id`,
    [...v.bindings, owner],
  );
  const rows: { id: number | string }[] = Array.isArray(result) ? result : result.rows;
  return new Set(rows.map((r) => Number(r.id)));
}

/** The attempt rows of the results that were written. */
async function insertAttempts(trx: Knex.Transaction, kept: AttemptResult[]): Promise<void> {
  const v = values(
    kept.map((r) => [r.deliveryId, r.attempt, r.startedAt, r.durationMs, r.statusCode, r.error, JSON.stringify(r.requestHeaders), r.responseHeaders ? JSON.stringify(r.responseHeaders) : null, r.responseBody]),
    ['bigint', 'integer', 'bigint', 'integer', 'integer', 'text', 'text', 'text', 'text'],
  );
  await trx.raw(
    `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, request_headers, response_headers, response_body) ${v.sql}`,
    v.bindings,
  );
}
