import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import type { Config } from '../config.ts';
import type { User } from '../domain/accounts.ts';
import type { Repository } from '../domain/repos.ts';
import { HostPolicyError, resolveAllowed } from '../net/hostPolicy.ts';
import { bareHost, parseSourceUrl, SourceUrlError, type Credentials } from '../remote/url.ts';
import { parseDuration } from '../util/duration.ts';
import { validationFailed, type ErrorDetail } from '../errors/wharfError.ts';
import { sealSecret } from '../secrets/box.ts';
import { MAX_INTERVAL_MS, MAX_PUSH_MIRRORS, type PushMirrorRequest } from './input.ts';
import { wake, type DomainContext } from '../services.ts';

/** The purpose (sealed column) of a push mirror's credentials. */
export const CREDENTIALS_PURPOSE = 'push_mirrors.credentials';

/** Sync outcomes shown as `last_sync_status`. */
export type SyncStatus = 'succeeded' | 'failed';

/** A push_mirrors row as the domain uses it. `credentials` (sealed) never leaves the domain. */
export interface PushMirror {
  id: number;
  repository_id: number;
  /** Without user info: safe to store and show. */
  url: string;
  credentials: string | null;
  sync_on_push: boolean;
  interval_ms: number;
  created_at: number;
  next_sync_at: number;
  generation: number;
  last_sync_at: number | null;
  last_sync_status: SyncStatus | null;
  last_error: string | null;
  locked_by: string | null;
  interruptions: number;
  parked_at: number | null;
}

/** A row as either driver gives it. */
export type PushMirrorRow = Omit<PushMirror, 'sync_on_push' | 'interval_ms' | 'created_at' | 'next_sync_at' | 'last_sync_at' | 'parked_at'> & {
  sync_on_push: boolean | number;
  interval_ms: DbInt;
  created_at: DbInt;
  next_sync_at: DbInt;
  last_sync_at: DbInt | null;
  parked_at: DbInt | null;
};

const nullableNumber = (v: DbInt | null) => (v === null || v === undefined ? null : Number(v));

/** A row read from either driver, its numbers and booleans made plain. */
export function toPushMirror(row: PushMirrorRow): PushMirror {
  return {
    id: Number(row.id),
    repository_id: Number(row.repository_id),
    url: row.url,
    credentials: row.credentials ?? null,
    sync_on_push: Boolean(row.sync_on_push),
    interval_ms: Number(row.interval_ms),
    created_at: Number(row.created_at),
    next_sync_at: Number(row.next_sync_at),
    generation: Number(row.generation),
    last_sync_at: nullableNumber(row.last_sync_at),
    last_sync_status: row.last_sync_status ?? null,
    last_error: row.last_error ?? null,
    locked_by: row.locked_by ?? null,
    interruptions: Number(row.interruptions ?? 0),
    parked_at: nullableNumber(row.parked_at),
  };
}

const invalid = (path: string, message: string) => validationFailed([{ path, message }]);

/**
 * Checks a remote URL: http or https (the rules of an import's source URL, SPEC §7.5),
 * allowed by IMPORT_ALLOWED_HOSTS on every address it resolves to. Returns it split from
 * any user info it carried.
 */
async function checkUrl(config: Config, raw: string): Promise<{ display: string; credentials: Credentials | null }> {
  let parsed;
  try {
    parsed = parseSourceUrl(raw);
  } catch (err) {
    if (err instanceof SourceUrlError) throw invalid('/url', err.message);
    throw err;
  }
  // Pushing needs authentication git:// does not have; git-lfs has no git:// endpoint either.
  if (parsed.url.protocol === 'git:') throw invalid('/url', 'protocol git is not allowed for a push mirror; use http or https');
  try {
    await resolveAllowed(config.importAllowedHosts, bareHost(parsed.url));
  } catch (err) {
    if (err instanceof HostPolicyError)
      throw invalid('/url', `the remote address is blocked by the host policy (IMPORT_ALLOWED_HOSTS): ${err.explain('IMPORT_ALLOWED_HOSTS')}`);
    throw invalid('/url', `could not resolve ${bareHost(parsed.url)}`);
  }
  return { display: parsed.display, credentials: parsed.credentials };
}

/** Reads an interval: a duration of at least the configured minimum (1m) and at most 366d. */
function checkInterval(config: Config, raw: string): number {
  const ms = parseDuration(raw);
  const min = config.pushMirrorMinIntervalMs;
  if (ms === undefined || ms < min || ms > MAX_INTERVAL_MS) {
    throw invalid('/interval', `must be a duration such as 10m, 8h or 1d, from ${min >= 60_000 ? `${min / 60_000}m` : `${min}ms`} to 366d`);
  }
  return ms;
}

/**
 * Creates a push mirror of a repository (SPEC §8.1.2): URL rules and host policy, the
 * interval, at most MAX_PUSH_MIRRORS per repository, the same URL once. Credentials (the
 * URL's user info, or username/password, which win) are sealed; the URL is stored without
 * them. The first sync is due at once.
 */
export async function createPushMirror(context: DomainContext, repo: Repository, user: User | null, input: PushMirrorRequest): Promise<PushMirror> {
  const { db, config } = context;
  const problems: ErrorDetail[] = [];
  const interval = await Promise.resolve()
    .then(() => checkInterval(config, input.interval ?? '8h'))
    .catch((err) => (problems.push(...err.details), 0));
  const url = await checkUrl(config, input.url).catch((err) => {
    if (!err?.details) throw err;
    problems.push(...err.details);
    return null;
  });
  if (problems.length > 0 || !url) throw validationFailed(problems);
  let credentials: Credentials | null = url.credentials;
  if (input.username !== undefined || input.password !== undefined) {
    credentials = { username: input.username || credentials?.username || 'git', password: input.password ?? credentials?.password ?? '' };
  }
  const now = Date.now();
  const mirror = await db.transaction(async (trx) => {
    const existing = await trx('push_mirrors').where('repository_id', repo.id).select('url');
    if (existing.length >= MAX_PUSH_MIRRORS) throw invalid('/url', `a repository has at most ${MAX_PUSH_MIRRORS} push mirrors`);
    if (existing.some((r: { url: string }) => r.url === url.display)) throw invalid('/url', 'this repository already has a push mirror to this URL');
    const [row] = await trx('push_mirrors')
      .insert({
        repository_id: repo.id,
        url: url.display,
        credentials: credentials ? sealSecret(config, CREDENTIALS_PURPOSE, JSON.stringify(credentials)) : null,
        sync_on_push: input.sync_on_push ?? true,
        interval_ms: interval,
        created_by: user?.id ?? null,
        created_at: now,
        updated_at: now,
        next_sync_at: now,
      })
      .returning('*');
    return toPushMirror(row);
  });
  wake(context).pushMirrors();
  return mirror;
}

/** The push mirrors of a repository, oldest first. */
export async function listPushMirrors(db: Db, repositoryId: number): Promise<PushMirror[]> {
  return (await db('push_mirrors').where('repository_id', repositoryId).orderBy('id')).map(toPushMirror);
}

/** One push mirror by id, or undefined. */
export async function findPushMirror(db: Db | Knex.Transaction, id: number): Promise<PushMirror | undefined> {
  const row = await db('push_mirrors').where('id', id).first();
  return row ? toPushMirror(row) : undefined;
}

/** Deletes a push mirror; a sync in flight loses its lease and stops. */
export async function deletePushMirror(db: Db, id: number): Promise<void> {
  await db('push_mirrors').where('id', id).delete();
}

/** Makes a push mirror due now, parked or not (the manual "sync now"): its interruptions are forgiven. */
export async function requestSync(context: DomainContext, id: number): Promise<void> {
  const { db } = context;
  await db('push_mirrors')
    .where('id', id)
    .update({ next_sync_at: Date.now(), generation: db.raw('generation + 1'), parked_at: null, interruptions: 0 });
  wake(context).pushMirrors();
}
