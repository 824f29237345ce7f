import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../db/connect.ts';
import type { Config } from '../config.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { configureRepository, repoDir } from '../git/bare.ts';
import { linkObject } from '../lfs/links.ts';
import type { ImportJob } from './jobs.ts';
import type { LfsPointer } from '../remote/lfsScan.ts';
import type { MissingObject } from '../remote/lfsFetch.ts';
import { insertMirror } from '../pullMirrors/state.ts';
import type { Knex } from 'knex';
import type { Repository } from '../domain/repos.ts';
import { recordOrgEvents } from '../events/outbox.ts';
import { repositoryEvent } from '../domain/payloads/orgEvents.ts';
import { raiseImportEnded } from './events.ts';
import { insertedId } from '../db/results.ts';

/** Who started an import job: the sender of the events its end raises (null when gone). */
async function senderOf(trx: Knex.Transaction, jobId: number): Promise<{ id: number; login: string } | null> {
  const row = await trx('import_jobs as j').join('users as u', 'u.id', 'j.created_by').where('j.id', jobId).first('u.id', 'u.login');
  return row ? { id: Number(row.id), login: String(row.login) } : null;
}

/** Raised when the job can no longer finish here: canceled meanwhile, or the name was taken. Ends in the job's `error`, never in a request. */
export class FinalizeError extends Error {
  constructor(
    message: string,
    readonly canceled = false,
  ) {
    super(message);
  }
}

/** The job's result, kept as JSON on the row. */
export interface ImportResult {
  default_branch: string;
  branches: number;
  tags: number;
  lfs_objects: number;
  missing_lfs_objects: MissingObject[];
  /** Commits reachable from the refs, and the repository's size on disk with its LFS objects (absent in jobs that finished before they were counted). */
  commits?: number;
  size_bytes?: number;
}

// Names the job a repository directory belongs to while it is being moved in, so a
// restart can tell its own half-finished move from someone else's repository.
const MARKER = 'wharf-import-job';
/** Written into the copy once every ref has arrived, so a resumed job skips the copy; holds the default branch. */
export const CLONED_MARKER = 'wharf-import-cloned';
/** The oids this job fetched and checked itself, one a line (see fetchLfsObjects). */
export const LFS_JOURNAL = 'wharf-import-lfs-fetched';

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

const isOurs = async (dir: string, job: ImportJob) => (await fs.readFile(path.join(dir, MARKER), 'utf8').catch(() => '')) === String(job.id);

/**
 * Undoes a move into REPOS_DIR whose transaction never committed (the process died
 * between the rename and the commit): the directory carries this job's marker and no
 * row names it, so it goes back to the job's temporary place, copy marker and all.
 */
export async function reclaimUncommittedMove(config: Config, job: ImportJob, tmpDir: string): Promise<void> {
  const finalDir = repoDir(config.reposDir, job.target_org, job.name);
  if (!(await exists(tmpDir)) && (await isOurs(finalDir, job))) await fs.rename(finalDir, tmpDir);
}

/**
 * Creates the repository row and moves the copy into REPOS_DIR/<org>/<name>.git in one
 * transaction: the row, the LFS links and the job's success commit only after the
 * directory is in place, and the directory is moved back if the commit fails. So a
 * failed import leaves neither row nor directory. A crash between the rename and the
 * commit leaves the directory with this job's marker; the next attempt moves it back.
 */
export async function finalizeImport(
  db: Db,
  config: Config,
  job: ImportJob,
  owner: string,
  tmpDir: string,
  result: ImportResult,
  stored: LfsPointer[],
): Promise<number> {
  const finalDir = repoDir(config.reposDir, job.target_org, job.name);
  await reclaimUncommittedMove(config, job, tmpDir);
  await fs.writeFile(path.join(tmpDir, MARKER), String(job.id));
  let moved = false;
  try {
    const repositoryId = await db.transaction(async (trx) => {
      const now = Date.now();
      // First statement: on Postgres it locks the job row, so a concurrent cancel waits and then finds it finished.
      const held = await trx('import_jobs')
        .where({ id: job.id, locked_by: owner })
        .whereNull('finished_at')
        .update({
          status: 'succeeded',
          phase: 'done',
          percent: 100,
          error: null,
          result: JSON.stringify(result),
          credentials: null,
          locked_by: null,
          lease_expires_at: null,
          finished_at: now,
          updated_at: now,
        });
      if (held === 0) throw new FinalizeError('the job was canceled', true);
      let id: number;
      try {
        const [row] = await trx('repositories')
          .insert({
            org_id: job.target_org_id,
            name: job.name,
            visibility: job.visibility,
            default_branch: result.default_branch,
            description: '',
            created_at: now,
            updated_at: now,
          })
          .returning('id');
        id = insertedId(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw new FinalizeError(`repository ${job.target_org}/${job.name} was created meanwhile`);
        throw err;
      }
      await trx('import_jobs').where('id', job.id).update({ repository_id: id });
      // Its `repository` created and `import` succeeded events (organization webhooks) commit with it.
      const repo: Repository = {
        id: Number(id),
        org_id: job.target_org_id,
        org: job.target_org,
        name: job.name,
        visibility: job.visibility,
        default_branch: result.default_branch,
        description: '',
        created_at: now,
        updated_at: now,
      };
      const sender = await senderOf(trx, job.id);
      await recordOrgEvents(trx, [repositoryEvent(config, 'created', repo, sender)]);
      await raiseImportEnded(trx, config, job.id, 'succeeded', repo);
      // A mirror (SPEC §8.1.1) keeps its source and the credentials, still sealed, with the repository.
      if (job.mirror_interval_ms !== null) {
        await insertMirror(trx, {
          repositoryId: id,
          sourceUrl: job.source_url,
          credentials: job.credentials,
          lfsUrl: job.lfs_url,
          intervalMs: job.mirror_interval_ms,
          syncedAt: now,
        });
      }
      for (const object of stored) await linkObject(trx, id, object.oid, object.size);
      await fs.mkdir(path.dirname(finalDir), { recursive: true });
      if (await exists(finalDir)) throw new FinalizeError(`repository directory ${job.target_org}/${job.name}.git already exists`);
      await fs.rename(tmpDir, finalDir);
      moved = true;
      await configureRepository(finalDir);
      return id;
    });
    // Committed: the markers have done their job.
    await fs.rm(path.join(finalDir, MARKER), { force: true });
    await fs.rm(path.join(finalDir, CLONED_MARKER), { force: true });
    await fs.rm(path.join(finalDir, LFS_JOURNAL), { force: true });
    return repositoryId;
  } catch (err) {
    if (moved && (await isOurs(finalDir, job))) await fs.rename(finalDir, tmpDir).catch(() => {});
    throw err;
  }
}
