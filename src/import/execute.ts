import fs from 'node:fs/promises';
import path from 'node:path';
import { type Services, wake } from '../services.ts';
import { checkGitmodules, copyRefs, copyRepository, copySize, countCommits, settleCopy, syncObjects, syncSettings } from './copy.ts';
import { scanClonedObjects } from '../remote/lfsScan.ts';
import { fetchLfsObjects } from '../remote/lfsFetch.ts';
import { CLONED_MARKER as CLONED, LFS_JOURNAL, finalizeImport, FinalizeError, reclaimUncommittedMove } from './finalize.ts';
import { askpassProgram, GitRunError } from '../remote/gitRemote.ts';
import { failJob, releaseJob, renewLease } from './claim.ts';
import { describeFailure, failureReason } from './failure.ts';
import { jobTempDir, type ImportJob } from './jobs.ts';
import { parseSourceUrl, type Credentials } from '../remote/url.ts';
import { openCredentials } from '../secrets/credentials.ts';
import { overallPercent, type Progress } from '../remote/progress.ts';
import { parkingReason } from './parked.ts';

/** Knobs of the runner; tests set small values to force the paths big sources take. */
export interface RunnerOptions {
  /** How often to look for due jobs (others' and expired leases), ms. */
  pollMs?: number;
  leaseMs?: number;
  /** Sources known to be at least this big (from an earlier attempt) use the incremental copy; 0 forces it. */
  incrementalAboveBytes?: number;
  deepenStep?: number;
  maxSteps?: number;
  maxAttempts?: number;
}

export const DEFAULTS: Required<RunnerOptions> = {
  pollMs: 2000,
  leaseMs: 15_000,
  incrementalAboveBytes: 1024 ** 3,
  deepenStep: 1000,
  maxSteps: 1000,
  maxAttempts: 5,
};

/** Why a job's signal was aborted. */
export type StopReason = 'shutdown' | 'canceled' | 'timeout';

/**
 * Runs one claimed job through cloning → fetching_lfs → finalizing, writing progress
 * under its lease. Every way out either finishes the job (succeeded, failed) or gives
 * it back (shutdown, a retry after a broken connection); a crash leaves the lease to run out.
 */
export async function executeJob(services: Services, job: ImportJob, owner: string, options: Required<RunnerOptions>, signal: AbortSignal): Promise<void> {
  const { db, config, log } = services;
  const tmp = jobTempDir(config, job.id);
  const parked = parkingReason(job);
  if (parked) {
    // Its node died in every one of its last runs: most likely this job kills it. Ending it
    // here (never run again by itself) is what keeps a node from a crash loop.
    await fs.rm(tmp, { recursive: true, force: true });
    if (await failJob(db, config, job.id, owner, { code: 'interrupted', reason: failureReason('interrupted', config), message: parked })) {
      wake(services).deliveries();
      log.error({ import_id: job.id, source_url: job.source_url, interruptions: job.interruptions }, 'import parked');
    }
    return;
  }
  const credentials: Credentials | null = job.credentials ? openCredentials(config, job.credentials) : null;
  const { write, progress, overall, high } = progressWriter(services, job, owner, options.leaseMs);
  const phases = phaseClock();
  try {
    if (job.attempts > options.maxAttempts) throw new Error(`gave up after ${options.maxAttempts} attempts`);
    const source = parseSourceUrl(job.source_url);
    const askpass = await askpassProgram(path.join(config.reposDir, '.imports'));
    await reclaimUncommittedMove(config, job, tmp);
    // A copy that was settled (below) and marked in an earlier attempt is not made again.
    const marked = await fs.readFile(path.join(tmp, CLONED), 'utf8').catch(() => '');
    let head: string | null = null;
    // A job once copied incrementally stays so (a retry after a broken connection, or a source known to be big).
    const strategy = job.strategy === 'incremental' || (job.bytes_received ?? 0) >= options.incrementalAboveBytes ? 'incremental' : 'full';
    if (!marked) {
      await write({ status: 'cloning', phase: 'connecting', percent: high(), strategy }, true);
      if (strategy === 'full') await fs.rm(tmp, { recursive: true, force: true }); // a full copy never resumes
      ({ head } = await copyRepository({
        dir: tmp,
        url: source.url,
        policy: config.importAllowedHosts,
        credentials,
        askpass,
        signal,
        stallMs: config.importStallTimeoutMs,
        strategy,
        deepenStep: options.deepenStep,
        maxSteps: options.maxSteps,
        onProgress: progress,
      }));
    }
    phases.end('copy');
    // Read-only looks at the copy, side by side: its .gitmodules (a refusal fails the import),
    // its LFS pointers, its commits and its refs (the LFS fetch below leaves the copy as it
    // is); run on every attempt, a resumed one included. Beside them, a fresh copy is
    // settled (HEAD, its config) and marked, and the copy's size is counted from the copy
    // itself (a fast copy may end before git reports it) and written with the progress.
    // Each git starts only once the one before it has (a spawn holds this thread while it
    // forks), so the longest, the .gitmodules walk, goes first.
    const checked = checkGitmodules(tmp);
    const objects = scanClonedObjects(tmp);
    // A clone holds what its refs reach and nothing else, so the listing counts its commits; an
    // incremental copy may also hold the history of a ref the last fetch pruned, so git walks it.
    const commits = strategy === 'full' ? objects.then((o) => o.commits) : countCommits(tmp);
    const refs = copyRefs(tmp);
    // A fresh full copy was cloned without git's fsync: it is written out before it is marked.
    const durable = marked || strategy !== 'full' ? Promise.resolve() : syncObjects(tmp);
    const settled = marked
      ? Promise.resolve(marked)
      : refs.then(async (found) => {
          const branch = await settleCopy(tmp, head, found);
          if (strategy === 'full') await Promise.all([durable, syncSettings(tmp)]);
          await fs.writeFile(path.join(tmp, CLONED), branch);
          return branch;
        });
    const sized = copySize(tmp).then(async (size) => {
      await write({ status: 'fetching_lfs', phase: 'checking_submodules', percent: overall('checking_submodules', 0), ...size }, true);
      return size;
    });
    // Every one of them ends before anything goes on: a failure removes the copy, which must not
    // be written meanwhile (the marker would survive the removal and pass a broken copy to the
    // next attempt). A refusal of its .gitmodules is the reason given before any other.
    const ended = await Promise.allSettled([checked, sized, refs, durable, settled, commits, objects]);
    const failed = ended.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [copied, found, defaultBranch, counted, { pointers }] = await Promise.all([sized, refs, settled, commits, objects]);
    const counts = { branches: found.branches.length, tags: found.tags };
    phases.end('check');
    await write({ phase: 'fetching_lfs', percent: overall('fetching_lfs', 0) }, true);
    const lfs = await fetchLfsObjects(pointers, {
      url: source.url,
      endpoint: job.lfs_url,
      credentials,
      policy: config.importAllowedHosts,
      lfs: services.lfs,
      journal: path.join(tmp, LFS_JOURNAL),
      stallMs: config.importStallTimeoutMs,
      signal,
      onProgress: (done, total) => void write({ percent: overall('fetching_lfs', total ? (done * 100) / total : 100) }),
    });
    phases.end('lfs');
    await write({ status: 'finalizing', phase: 'finalizing', percent: overall('finalizing', 0) }, true);
    const sizeBytes = copied.bytes_received + lfs.stored.reduce((sum, o) => sum + o.size, 0);
    await finalizeImport(
      db,
      config,
      job,
      owner,
      tmp,
      { default_branch: defaultBranch, ...counts, lfs_objects: lfs.stored.length, missing_lfs_objects: lfs.missing, commits: counted, size_bytes: sizeBytes },
      lfs.stored,
    );
    phases.end('finalize');
    wake(services).deliveries();
    log.info(
      {
        import_id: job.id,
        repository: `${job.target_org}/${job.name}`,
        ...counts,
        lfs_objects: lfs.stored.length,
        missing_lfs_objects: lfs.missing.length,
        ...phases.took(),
      },
      'import succeeded',
    );
  } catch (err) {
    await settleFailure(services, job, owner, options, signal, tmp, credentials, err);
  }
}

/** The phases of one attempt, in order, as the success line reports them. */
type Phase = 'copy' | 'check' | 'lfs' | 'finalize';

/**
 * Times an attempt's phases, each from the end of the one before (the first from the
 * attempt's start): `copy` (next to nothing when a resumed attempt finds the copy done), `check`
 * (the .gitmodules, LFS pointer and ref scans), `lfs` (the LFS fetch), `finalize` (the
 * move into place and its commit). `took` gives them as `<phase>_ms` fields.
 */
function phaseClock() {
  let last = performance.now();
  const ms: Partial<Record<`${Phase}_ms`, number>> = {};
  return {
    end(phase: Phase) {
      const now = performance.now();
      ms[`${phase}_ms`] = Math.round(now - last);
      last = now;
    },
    took: () => ms,
  };
}

/**
 * A job's progress writes: one after another under its lease, so a late one never lands
 * after the next phase's, at most one each 500 ms unless forced (fields a skipped write
 * held ride along with the next); and one overall percent that never goes back, across
 * phases, fetches and attempts.
 */
function progressWriter(services: Services, job: ImportJob, owner: string, leaseMs: number) {
  const { db } = services;
  let lastWrite = 0;
  let writes: Promise<unknown> = Promise.resolve();
  let pending: Record<string, unknown> = {};
  const write = (fields: Record<string, unknown>, force = false): Promise<unknown> => {
    pending = { ...pending, ...fields };
    if (!force && Date.now() - lastWrite < 500) return writes;
    lastWrite = Date.now();
    const next = pending;
    pending = {};
    writes = writes.then(() => renewLease(db, job.id, owner, leaseMs, next)).catch(() => {});
    return writes;
  };
  let high = job.percent;
  const overall = (phase: string, within: number | null) => {
    const figure = overallPercent(phase, within);
    if (figure !== null && (high === null || figure > high)) high = figure;
    return high;
  };
  const progress = (p: Progress) =>
    void write({
      phase: p.phase,
      percent: overall(p.phase, p.percent),
      ...(p.objects_received !== null ? { objects_received: p.objects_received } : {}),
      ...(p.bytes_received !== null ? { bytes_received: p.bytes_received } : {}),
      ...(p.objects_total !== null ? { objects_total: p.objects_total } : {}),
      ...(p.bytes_per_second !== null ? { bytes_per_second: p.bytes_per_second } : {}),
    });
  return { write, progress, overall, high: () => high };
}

async function settleFailure(
  services: Services,
  job: ImportJob,
  owner: string,
  options: Required<RunnerOptions>,
  signal: AbortSignal,
  tmp: string,
  credentials: Credentials | null,
  err: unknown,
): Promise<void> {
  const { db, config, log } = services;
  const reason = signal.aborted ? (signal.reason as StopReason) : null;
  if (reason === 'shutdown') {
    // Given back as it stands; the next process resumes an incremental copy where it stopped.
    await releaseJob(db, job.id, owner);
    return;
  }
  const gone = reason === 'canceled' || (err instanceof FinalizeError && err.canceled);
  if (!gone && err instanceof GitRunError && err.failure.broken && job.attempts < options.maxAttempts) {
    // The connection broke off: try again, keeping what arrived (shallow, then deepen).
    log.warn({ import_id: job.id, attempt: job.attempts, error: err.message }, 'import connection broke off; will retry incrementally');
    await releaseJob(db, job.id, owner, { strategy: 'incremental', phase: 'retrying' }, 2000 * job.attempts);
    return;
  }
  if (gone) {
    // Lost the lease: canceled (the copy is ours to remove), or taken over by another
    // process after we stalled past the lease (the copy is now its own: leave it).
    const row = await db('import_jobs').where('id', job.id).first('finished_at');
    if (!row || row.finished_at !== null) await fs.rm(tmp, { recursive: true, force: true });
    log.info({ import_id: job.id }, 'import stopped: canceled or taken over');
    return;
  }
  await fs.rm(tmp, { recursive: true, force: true });
  const failure = describeFailure(config, err, reason === 'timeout', credentials);
  if (await failJob(db, config, job.id, owner, failure)) wake(services).deliveries();
  log.warn({ import_id: job.id, source_url: job.source_url, error: failure.message, error_code: failure.code }, 'import failed');
}
