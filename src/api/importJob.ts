import type { Config } from '../config.ts';
import { jobDuration, type ImportJob } from '../import/jobs.ts';
import type { ImportResult } from '../import/finalize.ts';
import { VISIBILITIES } from '../domain/repos.ts';
import { iso } from './present.ts';
import { named, type Answer } from './route.ts';
import { ID, INT_OR_NULL, TEXT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';
import { FAILURE_CODES, type FailureCode } from '../import/failure.ts';
import { importWarnings } from '../import/warnings.ts';

const COUNT = { type: 'integer', minimum: 0 } as const;

/** The API form of an import job (SPEC §8.1). */
export const ImportJobSchema = named('ImportJob', {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'status',
    'progress',
    'error',
    'error_code',
    'error_reason',
    'source_url',
    'lfs_url',
    'target_org',
    'name',
    'visibility',
    'repository',
    'retry_of',
    'created_at',
    'started_at',
    'finished_at',
    'duration_ms',
    'warnings',
  ],
  properties: {
    id: ID,
    status: { type: 'string', enum: ['queued', 'cloning', 'fetching_lfs', 'finalizing', 'succeeded', 'failed', 'canceled'] },
    progress: {
      type: 'object',
      additionalProperties: false,
      required: ['phase', 'percent', 'objects_received', 'bytes_received', 'objects_total', 'bytes_per_second'],
      properties: {
        phase: { type: 'string' },
        percent: {
          type: ['number', 'null'],
          minimum: 0,
          maximum: 100,
          description: 'One figure for the whole job that never goes back; null until the first.',
        },
        objects_received: INT_OR_NULL,
        bytes_received: INT_OR_NULL,
        objects_total: { ...INT_OR_NULL, description: 'How many objects the source is sending, as git reports it while receiving.' },
        bytes_per_second: { ...INT_OR_NULL, description: 'The transfer rate git last reported while receiving.' },
      },
    },
    error: { ...TEXT_OR_NULL, description: "What went wrong, in detail (git's own words, without credentials); null unless failed." },
    error_code: {
      type: ['string', 'null'],
      enum: [...FAILURE_CODES, null],
      description: 'Why the job failed, as a stable code; null unless failed (and for jobs that failed before codes were kept).',
    },
    error_reason: { ...TEXT_OR_NULL, description: 'Why the job failed, in one sentence for people.' },
    source_url: { type: 'string' },
    lfs_url: { ...TEXT_OR_NULL, description: 'The LFS endpoint the request named; null when guessed from the source URL.' },
    target_org: { type: 'string' },
    name: { type: 'string' },
    visibility: { type: 'string', enum: VISIBILITIES },
    repository: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['full_name', 'url', 'default_branch', 'branches', 'tags', 'lfs_objects'],
      properties: {
        full_name: { type: 'string' },
        url: { type: 'string', format: 'uri' },
        default_branch: { type: 'string' },
        branches: COUNT,
        tags: COUNT,
        lfs_objects: COUNT,
        commits: { ...COUNT, description: 'Commits reachable from the branches and tags.' },
        size_bytes: { ...COUNT, description: 'Size on disk of the repository and its LFS objects.' },
        missing_lfs_objects: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['oid', 'size', 'error'],
            properties: {
              oid: { type: 'string', pattern: '^[0-9a-f]{64}$' },
              size: COUNT,
              error: { type: 'string', description: 'Why the source could not give it.' },
            },
          },
        },
      },
    },
    retry_of: { type: ['integer', 'null'], minimum: 1, description: 'The failed job this one retries with the same settings.' },
    created_at: TIME,
    started_at: { ...TIME_OR_NULL, description: 'When a worker first took the job up.' },
    finished_at: TIME_OR_NULL,
    duration_ms: { ...INT_OR_NULL, description: 'From started_at to finished_at; null until both are known.' },
    warnings: {
      type: 'array',
      description:
        'What went wrong in a job that still succeeded (the repository was imported), e.g. LFS objects missing at the source (listed in repository.missing_lfs_objects); empty otherwise.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['code', 'message'],
        properties: { code: { type: 'string', enum: ['missing_lfs_objects'] }, message: { type: 'string' } },
      },
    },
  },
} as const);

/**
 * The API form of a job (SPEC §8.1). Built field by field, so the stored credentials,
 * lease and attempt bookkeeping can never leak into an answer. `repository` adds
 * `missing_lfs_objects` (the objects the source could not give, each with oid, size and
 * the error) to the spec's counts (left out by jobs that finished before it was counted); `lfs_url` is the endpoint the request named, or null;
 * `warnings` says what went wrong in a job that still succeeded (SPEC §8.1 keeps such a job `succeeded`).
 */
export function presentImportJob(config: Config, job: ImportJob): Answer<typeof ImportJobSchema> {
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
      objects_total: job.objects_total,
      bytes_per_second: job.bytes_per_second,
    },
    error: job.error,
    error_code: job.status === 'failed' ? (job.error_code as FailureCode | null) : null,
    error_reason: job.status === 'failed' ? job.error_reason : null,
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
          commits: result.commits,
          size_bytes: result.size_bytes,
          missing_lfs_objects: result.missing_lfs_objects,
        }
      : null,
    retry_of: job.retry_of,
    created_at: iso(job.created_at),
    started_at: iso(job.started_at),
    finished_at: iso(job.finished_at),
    duration_ms: jobDuration(job),
    warnings: importWarnings(result),
  };
}
