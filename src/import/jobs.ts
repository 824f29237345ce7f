import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import type { Config } from '../config.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { repoDir } from '../git/bare.ts';
import { HostPolicyError, resolveAllowed } from '../net/hostPolicy.ts';
import { isValidName, NAME_RULE } from '../domain/names.ts';
import { findRepository, VISIBILITIES, type Visibility } from '../domain/repos.ts';
import type { Org, User } from '../domain/accounts.ts';
import { bareHost, parseSourceUrl, SourceUrlError, type Credentials } from '../remote/url.ts';
import { sealCredentials } from '../secrets/credentials.ts';
import { conflict, validationFailed, type WharfError } from '../errors/wharfError.ts';
import type { ImportRequest } from './input.ts';
import { DEFAULT_INTERVAL_MS, parseInterval } from '../pullMirrors/state.ts';
import { raiseImportEnded } from './events.ts';
import { wake, type DomainContext } from '../services.ts';
import { insertedId } from '../db/results.ts';

export type ImportStatus = 'queued' | 'cloning' | 'fetching_lfs' | 'finalizing' | 'succeeded' | 'failed' | 'canceled';

/** An import_jobs row joined with its organization's name. `credentials` never leaves the domain. */
export interface ImportJob {
  id: number;
  status: ImportStatus;
  phase: string | null;
  percent: number | null;
  objects_received: number | null;
  bytes_received: number | null;
  objects_total: number | null;
  bytes_per_second: number | null;
  error: string | null;
  /** Why it failed, as a stable code (failure.ts), and as one sentence a person reads; null unless failed (and for jobs that failed before they were kept). */
  error_code: string | null;
  error_reason: string | null;
  /** The failed job this one retries, or null. */
  retry_of: number | null;
  source_url: string;
  /** The LFS endpoint named in the request, or null to guess it from the source URL. */
  lfs_url: string | null;
  /** Null for an ordinary import; else the repository stays a mirror synced this often (ms). */
  mirror_interval_ms: number | null;
  credentials: string | null;
  target_org_id: number;
  target_org: string;
  name: string;
  visibility: Visibility;
  strategy: 'full' | 'incremental';
  attempts: number;
  /** Runs its node died in (see parked.ts). */
  interruptions: number;
  locked_by: string | null;
  lease_expires_at: number | null;
  started_at: number | null;
  result: string | null;
  created_at: number;
  finished_at: number | null;
}

/** How long a job ran, from its first claim to its end (ms); null while it runs or when it never started. */
export function jobDuration(job: Pick<ImportJob, 'started_at' | 'finished_at'>): number | null {
  return job.started_at !== null && job.finished_at !== null ? Math.max(0, job.finished_at - job.started_at) : null;
}

/** Where a job keeps its repository until it is moved into place: under REPOS_DIR, so the move is a rename. */
export function jobTempDir(config: Config, id: number): string {
  return path.join(config.reposDir, '.imports', `job-${id}.git`);
}

/** Why an import request is refused: a `validation_failed` naming the field, or a `conflict` (below). */
function invalid(pathName: string, message: string): WharfError {
  return validationFailed([{ path: pathName, message }]);
}

/**
 * Validates an import request (URL rules and host policy of SPEC §7.5, name, visibility,
 * name not taken) and queues the job. Nothing is created when it throws.
 */
export async function createImportJob(context: DomainContext, org: Org, user: User | null, input: ImportRequest): Promise<ImportJob> {
  const { db, config } = context;
  const visibility = input.visibility ?? 'private';
  if (!VISIBILITIES.includes(visibility as Visibility)) throw invalid('/visibility', `must be one of ${VISIBILITIES.join(', ')}`);
  if (!isValidName(input.name)) throw invalid('/name', NAME_RULE);
  let source;
  try {
    source = parseSourceUrl(input.source_url);
  } catch (err) {
    if (err instanceof SourceUrlError) throw invalid('/source_url', err.message);
    throw err;
  }
  try {
    await resolveAllowed(config.importAllowedHosts, bareHost(source.url));
  } catch (err) {
    if (err instanceof HostPolicyError)
      throw invalid('/source_url', `the source address is blocked by the host policy (IMPORT_ALLOWED_HOSTS): ${err.explain('IMPORT_ALLOWED_HOSTS')}`);
    throw invalid('/source_url', `could not resolve ${bareHost(source.url)}`);
  }
  const mirrorIntervalMs = checkMirror(input);
  const lfsUrl = input.lfs_url ? await checkLfsUrl(config, input.lfs_url) : null;
  let credentials: Credentials | null = source.credentials;
  if (input.auth_username !== undefined || input.auth_password !== undefined) {
    credentials = { username: input.auth_username || credentials?.username || 'git', password: input.auth_password ?? credentials?.password ?? '' };
  }
  if (await findRepository(db, org.name, input.name)) throw conflict(`Repository ${org.name}/${input.name} already exists`);
  if (await exists(repoDir(config.reposDir, org.name, input.name))) throw conflict(`Repository directory ${org.name}/${input.name}.git already exists`);
  const now = Date.now();
  try {
    const [row] = await db('import_jobs')
      .insert({
        status: 'queued',
        source_url: source.display,
        lfs_url: lfsUrl,
        mirror_interval_ms: mirrorIntervalMs,
        credentials: credentials ? sealCredentials(config, credentials) : null,
        target_org_id: org.id,
        name: input.name,
        visibility,
        created_by: user?.id ?? null,
        created_at: now,
        updated_at: now,
      })
      .returning('id');
    const job = (await findImportJob(db, insertedId(row)))!;
    wake(context).imports();
    return job;
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`An import into ${org.name}/${input.name} is already under way`);
    throw err;
  }
}

/** A request's `mirror` and `mirror_interval`: the interval in ms for a mirror, null otherwise. */
function checkMirror(input: ImportRequest): number | null {
  if (!input.mirror) {
    if (input.mirror_interval !== undefined) throw invalid('/mirror_interval', 'only with mirror: true');
    return null;
  }
  if (input.mirror_interval === undefined) return DEFAULT_INTERVAL_MS;
  const interval = parseInterval(input.mirror_interval);
  if (typeof interval === 'string') throw invalid('/mirror_interval', interval);
  return interval;
}

/**
 * Checks a request's `lfs_url`: an http(s) URL without user info (the source's
 * credentials are sent to it), allowed by the host policy. Returns it without a trailing slash.
 */
async function checkLfsUrl(config: Config, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('/lfs_url', 'must be an http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || /[\s\x00-\x1f\x7f]/.test(raw)) throw invalid('/lfs_url', 'must be an http or https URL');
  if (url.username || url.password) throw invalid('/lfs_url', 'must not hold credentials; give them as auth_username and auth_password');
  try {
    await resolveAllowed(config.importAllowedHosts, bareHost(url));
  } catch (err) {
    if (err instanceof HostPolicyError)
      throw invalid('/lfs_url', `the LFS address is blocked by the host policy (IMPORT_ALLOWED_HOSTS): ${err.explain('IMPORT_ALLOWED_HOSTS')}`);
    throw invalid('/lfs_url', `could not resolve ${bareHost(url)}`);
  }
  url.hash = '';
  return url.href.replace(/\/+$/, '');
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** The columns of an import job that toJob turns into numbers. */
type JobNumbers =
  | 'mirror_interval_ms'
  | 'percent'
  | 'objects_received'
  | 'bytes_received'
  | 'objects_total'
  | 'bytes_per_second'
  | 'retry_of'
  | 'interruptions'
  | 'lease_expires_at'
  | 'started_at'
  | 'created_at'
  | 'finished_at';

/** An `import_jobs` row with its organization's name (jobs()), as either driver gives it; its other columns come along too. */
interface ImportJobRow extends Omit<ImportJob, JobNumbers> {
  mirror_interval_ms: DbInt | null;
  percent: number | null;
  objects_received: DbInt | null;
  bytes_received: DbInt | null;
  objects_total: DbInt | null;
  bytes_per_second: DbInt | null;
  retry_of: DbInt | null;
  interruptions: number;
  lease_expires_at: DbInt | null;
  started_at: DbInt | null;
  created_at: DbInt;
  finished_at: DbInt | null;
}

function toJob(row: ImportJobRow): ImportJob {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ...row,
    mirror_interval_ms: n(row.mirror_interval_ms),
    percent: n(row.percent),
    objects_received: n(row.objects_received),
    bytes_received: n(row.bytes_received),
    objects_total: n(row.objects_total),
    bytes_per_second: n(row.bytes_per_second),
    retry_of: n(row.retry_of),
    interruptions: Number(row.interruptions ?? 0),
    lease_expires_at: n(row.lease_expires_at),
    started_at: n(row.started_at),
    created_at: Number(row.created_at),
    finished_at: n(row.finished_at),
  };
}

function jobs(db: Db) {
  return db('import_jobs as j').join('orgs as o', 'o.id', 'j.target_org_id').select('j.*', 'o.name as target_org');
}

/** A job by id, or undefined. */
export async function findImportJob(db: Db, id: number): Promise<ImportJob | undefined> {
  const row = await jobs(db).where('j.id', id).first();
  return row ? toJob(row) : undefined;
}

/** Jobs newest first: of one organization, or of every organization `user` owns. */
export async function listImportJobs(db: Db, user: User, options: { orgId?: number; limit: number; before?: number }): Promise<ImportJob[]> {
  const q = jobs(db).orderBy('j.id', 'desc').limit(options.limit);
  if (options.orgId !== undefined) q.where('j.target_org_id', options.orgId);
  else if (!user.is_admin) q.whereIn('j.target_org_id', db('memberships').where({ user_id: user.id, role: 'owner' }).select('org_id'));
  if (options.before !== undefined) q.where('j.id', '<', options.before);
  return (await q).map(toJob);
}

/**
 * Cancels a job that has not finished: it ends `canceled` at once and its credentials
 * are dropped. A runner holding it notices at its next lease renewal (or at once, in
 * this process, through the 'import-cancel' signal) and removes its temporary copy.
 * Returns false when the job had already finished.
 */
export async function cancelImportJob(context: DomainContext, job: ImportJob): Promise<boolean> {
  const { db, config } = context;
  const now = Date.now();
  const n = await db.transaction(async (trx) => {
    const changed = await trx('import_jobs')
      .where('id', job.id)
      .whereNull('finished_at')
      .update({ status: 'canceled', error: null, credentials: null, locked_by: null, lease_expires_at: null, finished_at: now, updated_at: now });
    // Its `import` canceled event (organization webhooks) commits with it.
    if (changed > 0) await raiseImportEnded(trx, config, job.id, 'canceled');
    return changed;
  });
  if (n === 0) return false;
  // Its runner (if it runs here) stops it; its `import` event goes out.
  wake(context).importCancel(job.id);
  wake(context).deliveries();
  // No runner held it: nobody else will clean up a copy left by an earlier attempt.
  if (!job.locked_by || (job.lease_expires_at ?? 0) < now) await fs.rm(jobTempDir(config, job.id), { recursive: true, force: true });
  return true;
}
