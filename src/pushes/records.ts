import type { Knex } from 'knex';
import { isPostgres, type Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import { CHUNKING, type Chunking } from './chunking.ts';
import { parseRefListing, parseUpdates, REFS_END, type PushLog } from './log.ts';
import type { RefUpdate } from '../git/refUpdate.ts';
import { insertedId, rawRows } from '../db/results.ts';

/** A push whose events are still to be recorded, as claimed by one node. */
export interface PushRecord {
  id: number;
  repositoryId: number;
  senderId: number | null;
  landedAt: number;
  updates: RefUpdate[];
  refsAfter?: Map<string, string>;
  chunksDone: number;
  /** The chunking scheme chunksDone counts in (chunking.ts). */
  chunking: Chunking;
  attempts: number;
  /** Runs that ended because their node died (counted when the claim was taken over or swept). */
  interruptions: number;
}

/** Raised when a node finds its claim on a push record taken over (its lease ran out). Internal control flow of the push recorder, never shown to a user. */
export class LeaseLost extends Error {
  constructor(id: number) {
    super(`push record ${id} was taken over by another node`);
  }
}

/** Stores a landed push (in the caller's transaction or not); returns its id. */
export async function insertPushRecord(db: Db | Knex.Transaction, repositoryId: number, senderId: number | null, log: PushLog): Promise<number> {
  const refs = log.refsAfter ? [...log.refsAfter].map(([ref, sha]) => `${sha} ${ref}\n`).join('') + `${REFS_END}\n` : null;
  const [row] = await db('push_records')
    .insert({
      repository_id: repositoryId,
      sender_id: senderId,
      landed_at: log.landedAt,
      updates: log.updates.map((u) => `${u.before} ${u.after} ${u.ref}\n`).join(''),
      refs_after: refs,
      next_try_at: 0,
      chunking: CHUNKING,
    })
    .returning('id');
  return insertedId(row);
}

/** A `push_records` row as either driver gives it. */
interface PushRecordRow {
  id: number;
  repository_id: number;
  sender_id: number | null;
  landed_at: DbInt;
  updates: string;
  refs_after: string | null;
  chunks_done: number;
  chunking: number | null;
  attempts: number;
  interruptions: number;
}

function fromRow(row: PushRecordRow): PushRecord {
  return {
    id: Number(row.id),
    repositoryId: Number(row.repository_id),
    senderId: row.sender_id === null ? null : Number(row.sender_id),
    landedAt: Number(row.landed_at),
    updates: parseUpdates(String(row.updates)),
    refsAfter: row.refs_after === null ? undefined : parseRefListing(String(row.refs_after)),
    chunksDone: Number(row.chunks_done),
    chunking: row.chunking === null ? 1 : (Number(row.chunking) as Chunking),
    attempts: Number(row.attempts),
    interruptions: Number(row.interruptions ?? 0),
  };
}

/**
 * Claims the next push record this node may record, in one statement: the oldest one
 * that is due, not parked, not held under a live lease by another node, and the earliest
 * unfinished record of its repository that is not parked (pushes to one repository are
 * recorded in landing order; a parked one no longer holds the others up). A lease older
 * than `leaseMs` is stale and taken over, which counts an interruption: its node died
 * (or froze) while recording. Undefined when none is ready.
 */
export async function claimPushRecord(db: Db, node: string, leaseMs: number): Promise<PushRecord | undefined> {
  const now = Date.now();
  const pick = `SELECT r.id FROM push_records r
    WHERE r.parked_at IS NULL AND r.next_try_at <= ? AND (r.locked_by IS NULL OR r.locked_at < ?)
      AND NOT EXISTS (SELECT 1 FROM push_records e WHERE e.repository_id = r.repository_id AND e.id < r.id AND e.parked_at IS NULL)
    ORDER BY r.id LIMIT 1${isPostgres(db) ? ' FOR UPDATE SKIP LOCKED' : ''}`;
  const result: unknown = await db.raw(
    `UPDATE push_records SET locked_by = ?, locked_at = ?, interruptions = interruptions + CASE WHEN locked_by IS NULL THEN 0 ELSE 1 END WHERE id = (${pick}) RETURNING *`,
    [node, now, now, now - leaseMs],
  );
  const rows = rawRows<PushRecordRow>(result);
  return rows.length > 0 ? fromRow(rows[0]) : undefined;
}

/** Renews this node's lease on a record; false when another node has taken it over. */
export async function renewLease(db: Db, id: number, node: string): Promise<boolean> {
  return (await db('push_records').where({ id, locked_by: node }).update({ locked_at: Date.now() })) === 1;
}

/**
 * Marks chunk `chunk` of a record done, in the transaction that writes its events; the
 * record is deleted with its last chunk. Throws LeaseLost (rolling the chunk back) when
 * this node no longer holds the record or the chunk was recorded already.
 */
export async function markChunkDone(trx: Knex.Transaction, id: number, node: string, chunk: number, last: boolean): Promise<void> {
  const held = trx('push_records').where({ id, locked_by: node, chunks_done: chunk });
  const changed = last ? await held.delete() : await held.update({ chunks_done: chunk + 1, locked_at: Date.now() });
  if (changed !== 1) throw new LeaseLost(id);
}

/** Backoff after the n-th failed attempt (1 s, 2 s, 4 s … at most 10 min). */
export const retryDelayMs = (attempts: number) => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 600_000);

/** Records a failed attempt: the record is released and tried again after a backoff. */
export async function failPushRecord(db: Db, id: number, node: string, attempts: number, error: string): Promise<number> {
  const nextTryAt = Date.now() + retryDelayMs(attempts);
  await db('push_records')
    .where({ id, locked_by: node })
    .update({ attempts, next_try_at: nextTryAt, locked_by: null, locked_at: null, last_error: error.slice(0, 1000) });
  return nextTryAt;
}

/** Gives a record back unfinished (a stopping node), for any node to take at once. */
export async function releasePushRecord(db: Db, id: number, node: string): Promise<void> {
  await db('push_records').where({ id, locked_by: node }).update({ locked_by: null, locked_at: null });
}

/** Push records of a repository whose recording failed at least once and that are not parked: how many, and the next try. */
export async function failingPushRecords(db: Db, repositoryId: number): Promise<{ count: number; attempts: number; nextTryAt: number } | undefined> {
  const [row] = (await db('push_records')
    .where('repository_id', repositoryId)
    .where('attempts', '>', 0)
    .whereNull('parked_at')
    .count({ n: '*' })
    .max({ attempts: 'attempts' })
    .min({ next: 'next_try_at' })) as { n: DbInt; attempts: number | null; next: DbInt | null }[];
  return Number(row?.n ?? 0) > 0 ? { count: Number(row.n), attempts: Number(row.attempts), nextTryAt: Number(row.next) } : undefined;
}

/** Push records not yet recorded, by state (waiting: never failed; failing: failed at least once; parked: never tried again by itself). */
export async function pendingPushRecords(db: Db): Promise<{ waiting: number; failing: number; parked: number }> {
  const state = 'CASE WHEN parked_at IS NOT NULL THEN 2 WHEN attempts > 0 THEN 1 ELSE 0 END';
  const rows = (await db('push_records')
    .select(db.raw(`${state} AS state`))
    .count({ n: '*' })
    .groupByRaw(state)) as { state: number; n: DbInt }[];
  const out = { waiting: 0, failing: 0, parked: 0 };
  for (const r of rows) out[(['waiting', 'failing', 'parked'] as const)[Number(r.state)]] = Number(r.n);
  return out;
}
