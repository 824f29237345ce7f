import fs from 'node:fs/promises';
import path from 'node:path';
import type { Services } from '../services.ts';
import type { Worker } from '../work/worker.ts';
import { createWorkLoop, type Running } from '../work/loop.ts';
import { nodeId } from '../work/nodeId.ts';
import { claimImportJobs, releaseJob, renewLease, sweepDeadOwners } from './claim.ts';
import { findImportJob } from './jobs.ts';
import { DEFAULTS, executeJob, type RunnerOptions, type StopReason } from './execute.ts';
import { SIGNAL } from '../services.ts';

/**
 * The import runner, on the worker loop (src/work/loop.ts): claims due jobs (woken by
 * the 'imports' signal and by a poll that also finds expired leases), runs at most
 * IMPORT_CONCURRENCY at once, renews each job's lease while it runs, and stops a job on
 * cancel, timeout, a lost lease or shutdown.
 */
export function createImportRunner(services: Services, runnerOptions: RunnerOptions = {}): Worker {
  const { db, config, log, signals } = services;
  const options = { ...DEFAULTS, ...runnerOptions };
  const owner = nodeId(config.dataDir);

  async function run(id: number, { signal, abort }: Running) {
    let deadline: NodeJS.Timeout | undefined;
    try {
      const job = await findImportJob(db, id);
      if (!job || job.finished_at !== null || job.locked_by !== owner) return;
      const left = (job.started_at ?? Date.now()) + config.importTimeoutMs - Date.now();
      deadline = setTimeout(() => abort('timeout' satisfies StopReason), Math.max(0, left));
      log.info({ import_id: id, source_url: job.source_url, attempt: job.attempts }, 'import started');
      await executeJob(services, job, owner, options, signal);
    } catch (err) {
      log.error({ err, import_id: id }, 'import runner error');
    } finally {
      clearTimeout(deadline);
    }
  }

  const loop = createWorkLoop<number>({
    // One organization may hold every slot but one, so another organization's job can always start.
    claim: (free) => claimImportJobs(db, owner, free, options.leaseMs, Math.max(1, config.importConcurrency - 1)),
    run,
    renew: (id) => renewLease(db, id, owner, options.leaseMs),
    renewEveryMs: Math.max(200, Math.floor(options.leaseMs / 3)),
    // Claimed while stopping: given straight back, its attempt uncounted.
    giveBack: (id) => releaseJob(db, id, owner, { attempts: db.raw('attempts - 1') }),
    slots: config.importConcurrency,
    wakeOn: { signals: [[signals, SIGNAL.imports]], pollMs: options.pollMs },
    stopMode: 'abort',
    // A job no longer held was canceled (or taken over): it stops as a cancel does.
    reasons: { stop: 'shutdown' satisfies StopReason, leaseLost: 'canceled' satisfies StopReason },
    onError: (err, id) => log.error({ err, import_id: id }, id === undefined ? 'import claim failed' : 'import runner error'),
  });

  const onCancel = (id: number) => loop.abort(id, 'canceled' satisfies StopReason);

  return {
    async start() {
      await sweepDeadOwners(db, owner);
      await sweepTempDirs(services);
      signals.on(SIGNAL.importCancel, onCancel);
      loop.start();
    },
    async stop() {
      signals.off(SIGNAL.importCancel, onCancel);
      await loop.stop();
    },
  };
}

/** Removes temporary copies of jobs that have finished or are gone (left by a crash at the wrong moment). */
async function sweepTempDirs({ db, config }: Services): Promise<void> {
  const dir = path.join(config.reposDir, '.imports');
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const m = /^job-(\d+)\.git$/.exec(name);
    if (!m) continue;
    const job = await findImportJob(db, Number(m[1]));
    if (!job || job.finished_at !== null) await fs.rm(path.join(dir, name), { recursive: true, force: true });
  }
}
