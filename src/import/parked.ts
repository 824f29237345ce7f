import type { Db } from '../db/connect.ts';
import { countRows } from '../db/rows.ts';
import type { ImportJob } from './jobs.ts';

/** Runs of a job its node may die in before the job is parked instead of run again. */
export const MAX_INTERRUPTIONS = 3;

/** Every parked job's error starts with this (the API, UI and metrics tell parked jobs by it). */
export const PARKED_PREFIX = 'parked:';

/** The error a job is parked with, or null when it may run: its node died in MAX_INTERRUPTIONS of its runs. */
export function parkingReason(job: Pick<ImportJob, 'interruptions'>): string | null {
  if (job.interruptions < MAX_INTERRUPTIONS) return null;
  return `${PARKED_PREFIX} the node running this import stopped ${job.interruptions} times while it ran; it will not be started again by itself (import it again to retry)`;
}

/** How many import jobs are parked, for /metrics' wharf_parked{kind="import"}. */
export async function parkedImports(db: Db): Promise<number> {
  return countRows(db('import_jobs').where('status', 'failed').where('error', 'like', `${PARKED_PREFIX}%`));
}
