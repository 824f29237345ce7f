import fs from 'node:fs/promises';
import type { Db } from '../db/connect.ts';
import type { User } from '../domain/accounts.ts';
import { findRepository } from '../domain/repos.ts';
import { repoDir } from '../git/bare.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { HostPolicyError, resolveAllowed } from '../net/hostPolicy.ts';
import { conflict, validationFailed } from '../errors/wharfError.ts';
import { bareHost, parseSourceUrl } from '../remote/url.ts';
import { findImportJob, type ImportJob } from './jobs.ts';
import { wake, type DomainContext } from '../services.ts';
import { insertedId } from '../db/results.ts';

/**
 * Starts a new import with the settings of a failed one: source URL, target, visibility,
 * LFS endpoint, mirror interval, and its credentials, which move over still sealed (the
 * failed job no longer holds them, so a secret lives in one job at a time and is never
 * shown to anyone). The source passes the host policy again, and the name must still be
 * free. Returns the new job; a job that did not fail, or was retried already, is a conflict.
 */
export async function retryImportJob(context: DomainContext, job: ImportJob, user: User | null): Promise<ImportJob> {
  const { db, config } = context;
  if (job.status !== 'failed') throw conflict(`Import ${job.id} did not fail (${job.status}); only a failed import can be retried`);
  const already = await retriedAs(db, job.id);
  if (already !== null) throw conflict(`Import ${job.id} was already retried as import ${already}`);
  const source = parseSourceUrl(job.source_url);
  try {
    await resolveAllowed(config.importAllowedHosts, bareHost(source.url));
  } catch (err) {
    const message =
      err instanceof HostPolicyError ? 'the source address is blocked by the host policy (IMPORT_ALLOWED_HOSTS)' : `could not resolve ${bareHost(source.url)}`;
    throw validationFailed([{ path: '/source_url', message }]);
  }
  if (await findRepository(db, job.target_org, job.name)) throw conflict(`Repository ${job.target_org}/${job.name} already exists`);
  const taken = await fs.access(repoDir(config.reposDir, job.target_org, job.name)).then(
    () => true,
    () => false,
  );
  if (taken) throw conflict(`Repository directory ${job.target_org}/${job.name}.git already exists`);
  try {
    const id = await db.transaction(async (trx) => {
      const now = Date.now();
      // Read inside the transaction: two retries of one job cannot both take its credentials.
      const old = await trx('import_jobs').where({ id: job.id, status: 'failed' }).first('credentials');
      if (!old) throw conflict(`Import ${job.id} did not fail; only a failed import can be retried`);
      const [row] = await trx('import_jobs')
        .insert({
          status: 'queued',
          source_url: job.source_url,
          lfs_url: job.lfs_url,
          mirror_interval_ms: job.mirror_interval_ms,
          credentials: old.credentials,
          target_org_id: job.target_org_id,
          name: job.name,
          visibility: job.visibility,
          created_by: user?.id ?? null,
          retry_of: job.id,
          created_at: now,
          updated_at: now,
        })
        .returning('id');
      await trx('import_jobs').where('id', job.id).update({ credentials: null, updated_at: now });
      return insertedId(row);
    });
    const retry = (await findImportJob(db, id))!;
    wake(context).imports();
    return retry;
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`An import into ${job.target_org}/${job.name} is already under way`);
    throw err;
  }
}

/** The job that retried `id`, or null. */
export async function retriedAs(db: Db, id: number): Promise<number | null> {
  const row = await db('import_jobs').where('retry_of', id).orderBy('id').first('id');
  return row ? Number(row.id) : null;
}
