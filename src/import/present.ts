import type { Config } from '../config.ts';
import type { ImportJob } from './jobs.ts';
import type { ImportResult } from './finalize.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The API form of a job (SPEC §8.1). Built field by field, so the stored credentials,
 * lease and attempt bookkeeping can never leak into an answer. `repository` adds
 * `missing_lfs_objects` (the objects the source could not give, each with oid, size and
 * the reason) to the spec's counts; `lfs_url` is the endpoint the request named, or null.
 */
export function presentImportJob(config: Config, job: ImportJob) {
  const result: ImportResult | null = job.status === 'succeeded' && job.result ? JSON.parse(job.result) : null;
  const fullName = `${job.target_org}/${job.name}`;
  return {
    id: job.id,
    status: job.status,
    progress: {
      phase: job.phase ?? job.status,
      percent: job.percent,
      objects_received: job.objects_received,
      bytes_received: job.bytes_received,
    },
    error: job.error,
    source_url: job.source_url,
    lfs_url: job.lfs_url,
    target_org: job.target_org,
    name: job.name,
    visibility: job.visibility,
    repository: result
      ? {
          full_name: fullName,
          url: `${config.baseUrl}/${fullName}`,
          default_branch: result.default_branch,
          branches: result.branches,
          tags: result.tags,
          lfs_objects: result.lfs_objects,
          missing_lfs_objects: result.missing_lfs_objects,
        }
      : null,
    created_at: iso(job.created_at),
    finished_at: iso(job.finished_at),
  };
}
