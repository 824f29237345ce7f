import type { Knex } from 'knex';
import type { Db } from '../../db/connect.ts';
import type { DeliveryStatus } from '../../webhooks/model.ts';
import type { ClaimHealth } from './claim.ts';
import type { AttemptRecord, OutcomeKind } from './attemptRecord.ts';
import { isPostgres } from '../../db/connect.ts';
import { preparedQuery } from './postgres.ts';
import { mainConnectionRunner, type SqliteRunner, type SqlStep } from './sqlite.ts';

/** The outcome of one attempt, ready to be written: its history row and the delivery's next step. */
export interface AttemptResult extends AttemptRecord {
  deliveryId: number;
  /** The attempt's number: it is counted (deliveries.attempts set to it) by this write. */
  attempt: number;
  /** The claim's token (Claimed.claims): only the delivery's latest claim may write. */
  claims: number;
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  /** How the attempt ended, and why when it failed: the health accounting (healthKeeper.ts) reads them, the write does not. */
  outcome: OutcomeKind;
  reason: string | null;
  /** The webhook, and its health as the claim read it: the health accounting reads them too. */
  hookId: number;
  health: ClaimHealth | null;
  /** When the receiver asked to be retried (an HTTP Retry-After, at most an hour ahead), or null. */
  retryAfterAt: number | null;
}

/**
 * Writes attempt results in batches (SQLite: one transaction, a hundred to a statement;
 * Postgres: one prepared statement per 500 that updates and inserts together). This is
 * where an attempt is counted: `attempts` becomes the attempt's number and `claims` goes
 * back to 0, together with the attempt's row; so do the `interruptions`, since only deaths
 * during one same attempt point at the delivery itself (a delivery that kills its node never
 * gets a result, so its deaths add up; one caught by node deaths in several attempts is innocent). A result is written only while this
 * process still holds the delivery's latest claim for that attempt (lease_owner, claims
 * and attempts match): a process may only finish or reschedule what it claimed.
 *
 * Guarantee (at-least-once): the receiver may already have the delivery when this runs.
 * If the process dies before this commits, the attempt is not counted: the lease runs
 * out and the same attempt is made again, with the same number and the same
 * X-Service-Delivery guid; receivers dedupe on it. Never skipped, at worst repeated. A result whose
 * lease was lost (the webhook was deleted, or the lease ran out and another process
 * took the delivery) is dropped, as its row now belongs to someone else or to no one.
 * Returns how many results were written.
 */
export async function recordResults(db: Db, owner: string, results: AttemptResult[], sqlite: SqliteRunner = mainConnectionRunner(db)): Promise<number> {
  if (results.length === 0) return 0;
  if (isPostgres(db)) {
    // One statement per chunk, outside any transaction: the update and its attempt rows
    // commit together because they are one statement (one round trip instead of four).
    let written = 0;
    for (let i = 0; i < results.length; i += PG_CHUNK) written += await writeChunkPostgres(db, owner, results.slice(i, i + PG_CHUNK));
    return written;
  }
  // SQLite: one IMMEDIATE transaction, two statements per hundred results.
  const steps: SqlStep[] = [];
  for (let i = 0; i < results.length; i += CHUNK) steps.push(...chunkStepsSqlite(owner, results.slice(i, i + CHUNK)));
  const changes = (await sqlite(steps, true)) as number[];
  // Every other step is an UPDATE: its changes are the results written.
  return changes.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
}

/** Rows per Postgres statement. */
const PG_CHUNK = 500;

/**
 * Postgres: the lease-checked UPDATE and the INSERT of the attempt rows of exactly the rows
 * it updated, in ONE statement (data-modifying CTE), so both commit or neither does. The
 * rows travel as one array per column (unnest), so the text never changes with the batch
 * size and the statement is prepared once per connection. The rows are found by id alone:
 * a held lease implies `pending` (only a result write ends one), and a `status` condition
 * let the planner, whose statistics lag behind a fresh backlog, scan every pending row
 * through the due index for each batch.
 */
const WRITE_POSTGRES = `
  WITH v AS (
    SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::bigint[], $5::integer[], $6::text[], $7::integer[],
                         $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::integer[])
        AS v(id, attempt, status, next_attempt_at, status_code, error, duration_ms, started_at, finished_at,
             request_headers, response_headers, response_body, claims)),
  updated AS (
    UPDATE deliveries
       SET attempts = v.attempt, claims = 0, interruptions = 0, status = v.status, next_attempt_at = v.next_attempt_at, lease_owner = NULL, status_code = v.status_code,
           error = v.error, duration_ms = v.duration_ms, last_attempt_at = v.started_at, finished_at = v.finished_at
      FROM v
     WHERE deliveries.id = v.id AND deliveries.attempts = v.attempt - 1 AND deliveries.claims = v.claims AND deliveries.lease_owner = $14
    RETURNING deliveries.id)
  INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, request_headers, response_headers, response_body)
  SELECT v.id, v.attempt, v.started_at, v.duration_ms, v.status_code, v.error, v.request_headers, v.response_headers, v.response_body
    FROM v JOIN updated ON updated.id = v.id`;

async function writeChunkPostgres(db: Db, owner: string, chunk: AttemptResult[]): Promise<number> {
  const column = <T>(pick: (r: AttemptResult) => T) => chunk.map(pick);
  const result = await preparedQuery(db, 'wharf_write_results_claims', WRITE_POSTGRES, [
    column((r) => r.deliveryId),
    column((r) => r.attempt),
    column((r) => r.status),
    column((r) => r.nextAttemptAt),
    column((r) => r.statusCode),
    column((r) => r.error),
    column((r) => r.durationMs),
    column((r) => r.startedAt),
    column((r) => (r.status === 'pending' ? null : r.endedAt)),
    column((r) => JSON.stringify(r.requestHeaders)),
    column((r) => (r.responseHeaders ? JSON.stringify(r.responseHeaders) : null)),
    column((r) => r.responseBody),
    column((r) => r.claims),
    owner,
  ]);
  return result.rowCount;
}

const CHUNK = 100;

/**
 * Multi-row VALUES for SQLite, written by hand: Knex renders SQLite multi-row inserts as
 * a chain of SELECT … UNION ALL, which costs far more to prepare. (The casts of the first
 * row are harmless there.)
 */
function values(rows: Knex.Value[][], casts: string[]): { sql: string; bindings: Knex.Value[] } {
  const first = `(${casts.map((c) => `CAST(? AS ${c})`).join(', ')})`;
  const rest = `(${casts.map(() => '?').join(', ')})`;
  return { sql: `VALUES ${[first, ...rows.slice(1).map(() => rest)].join(', ')}`, bindings: rows.flat() };
}

/**
 * SQLite, for a chunk of results: first the attempt rows of the deliveries whose lease
 * still matches, then the UPDATE of those same deliveries (which ends the lease, so the
 * INSERT must come first). In one transaction, no other writer comes between them.
 */
function chunkStepsSqlite(owner: string, chunk: AttemptResult[]): SqlStep[] {
  const attempts = values(
    chunk.map((r) => [
      r.deliveryId,
      r.attempt,
      r.startedAt,
      r.durationMs,
      r.statusCode,
      r.error,
      JSON.stringify(r.requestHeaders),
      r.responseHeaders ? JSON.stringify(r.responseHeaders) : null,
      r.responseBody,
      r.claims,
    ]),
    ['bigint', 'integer', 'bigint', 'integer', 'integer', 'text', 'text', 'text', 'text', 'integer'],
  );
  const updates = values(
    chunk.map((r) => [
      r.deliveryId,
      r.attempt,
      r.status,
      r.nextAttemptAt,
      r.statusCode,
      r.error,
      r.durationMs,
      r.startedAt,
      r.status === 'pending' ? null : r.endedAt,
      r.claims,
    ]),
    ['bigint', 'integer', 'text', 'bigint', 'integer', 'text', 'integer', 'bigint', 'bigint', 'integer'],
  );
  // VALUES columns are column1, column2, …
  return [
    {
      sql: `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, request_headers, response_headers, response_body)
            SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, v.column9
              FROM (${attempts.sql}) AS v
              JOIN deliveries AS d ON d.id = v.column1 AND d.attempts = v.column2 - 1 AND d.claims = v.column10
                               AND d.lease_owner = ? AND d.status = 'pending'`,
      params: [...attempts.bindings, owner],
      mode: 'run',
    },
    {
      sql: `UPDATE deliveries
               SET attempts = v.column2, claims = 0, interruptions = 0, status = v.column3, next_attempt_at = v.column4, lease_owner = NULL, status_code = v.column5,
                   error = v.column6, duration_ms = v.column7, last_attempt_at = v.column8, finished_at = v.column9
              FROM (${updates.sql}) AS v
             WHERE deliveries.id = v.column1 AND deliveries.attempts = v.column2 - 1 AND deliveries.claims = v.column10
               AND deliveries.lease_owner = ? AND deliveries.status = 'pending'`,
      params: [...updates.bindings, owner],
      mode: 'run',
    },
  ];
}
