import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import { parseDuration } from '../util/duration.ts';

/** The shortest interval between two scheduled syncs (SPEC §8.1.1: at least 1m). */
export const MIN_INTERVAL_MS = 60_000;
/** The longest: a year and a day (longer would only ever be a mistake). */
export const MAX_INTERVAL_MS = 366 * 86_400_000;
/** A parked mirror's next sync time (the last time a Date holds): never by itself; a sync request starts it again. */
export const NEVER = 8_640_000_000_000_000;
/** The interval when the import request names none. */
export const DEFAULT_INTERVAL_MS = 8 * 3_600_000;

/** A pull mirror's state: one `repository_mirrors` row. `credentials` (sealed) never leaves the domain. */
export interface Mirror {
  id: number;
  repositoryId: number;
  /** Without user info: safe to show. */
  sourceUrl: string;
  credentials: string | null;
  lfsUrl: string | null;
  intervalMs: number;
  nextSyncAt: number;
  lastSyncAt: number | null;
  lastSyncStatus: 'succeeded' | 'failed' | null;
  lastError: string | null;
  lockedBy: string | null;
  leaseExpiresAt: number | null;
  interruptions: number;
  /** The ref updates a sync is making ("old new ref" lines), or null. */
  pending: string | null;
}

interface MirrorRow {
  id: number;
  repository_id: number;
  source_url: string;
  credentials: string | null;
  lfs_url: string | null;
  interval_ms: DbInt;
  next_sync_at: DbInt;
  last_sync_at: DbInt | null;
  last_sync_status: string | null;
  last_error: string | null;
  locked_by: string | null;
  lease_expires_at: DbInt | null;
  interruptions: number;
  pending: string | null;
}

const n = (v: DbInt | null) => (v === null ? null : Number(v));

export function toMirror(row: MirrorRow): Mirror {
  return {
    id: Number(row.id),
    repositoryId: Number(row.repository_id),
    sourceUrl: row.source_url,
    credentials: row.credentials,
    lfsUrl: row.lfs_url,
    intervalMs: Number(row.interval_ms),
    nextSyncAt: Number(row.next_sync_at),
    lastSyncAt: n(row.last_sync_at),
    lastSyncStatus: row.last_sync_status as Mirror['lastSyncStatus'],
    lastError: row.last_error,
    lockedBy: row.locked_by,
    leaseExpiresAt: n(row.lease_expires_at),
    interruptions: Number(row.interruptions ?? 0),
    pending: row.pending,
  };
}

/**
 * Reads a `mirror_interval` ("10m", "8h"): milliseconds, or a message saying why not.
 * At least 1m; at most 366d.
 */
export function parseInterval(text: string): number | string {
  const ms = parseDuration(text);
  if (ms === undefined) return 'must be a duration such as 10m, 8h or 1d';
  if (ms < MIN_INTERVAL_MS) return 'must be at least 1m';
  if (ms > MAX_INTERVAL_MS) return 'must be at most 366d';
  return ms;
}

/** An interval as the largest whole unit that states it exactly ("8h", "90m", "1d"). */
export function formatInterval(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** A repository's mirror state, or undefined when it is not (or no longer) a mirror. */
export async function findMirror(db: Db | Knex.Transaction, repositoryId: number): Promise<Mirror | undefined> {
  const row = await db('repository_mirrors').where('repository_id', repositoryId).first();
  return row ? toMirror(row) : undefined;
}

/** What a new mirror holds; written by the import's finalize, in its transaction. */
export interface NewMirror {
  repositoryId: number;
  sourceUrl: string;
  /** Sealed already (the import job's own sealed value). */
  credentials: string | null;
  lfsUrl: string | null;
  intervalMs: number;
  /** When the repository was made: the import was the first sync. */
  syncedAt: number;
}

/** Creates a repository's mirror state in the caller's transaction (the one that creates the repository). */
export async function insertMirror(trx: Knex.Transaction, mirror: NewMirror): Promise<void> {
  await trx('repository_mirrors').insert({
    repository_id: mirror.repositoryId,
    source_url: mirror.sourceUrl,
    credentials: mirror.credentials,
    lfs_url: mirror.lfsUrl,
    interval_ms: mirror.intervalMs,
    next_sync_at: mirror.syncedAt + mirror.intervalMs,
    last_sync_at: mirror.syncedAt,
    last_sync_status: 'succeeded',
    created_at: mirror.syncedAt,
    updated_at: mirror.syncedAt,
  });
}

/**
 * Queues a sync now (POST …/mirror/sync). A sync already due or running absorbs the call:
 * nothing changes then. A parked mirror starts again with its interruptions forgotten.
 * Returns the state after, or undefined when the repository is not a mirror.
 */
export async function requestSync(db: Db, repositoryId: number): Promise<Mirror | undefined> {
  const now = Date.now();
  await db('repository_mirrors')
    .where('repository_id', repositoryId)
    .where('next_sync_at', '>', now)
    .where((q) => q.whereNull('locked_by').orWhere('lease_expires_at', '<', now))
    .update({ next_sync_at: now, interruptions: db.raw('CASE WHEN next_sync_at >= ? THEN 0 ELSE interruptions END', [NEVER]), updated_at: now });
  return findMirror(db, repositoryId);
}
