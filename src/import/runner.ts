import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import PQueue from 'p-queue';
import type { Services } from '../services.ts';
import type { Worker } from '../server.ts';
import { claimImportJobs, ownerName, releaseJob, renewLease, sweepDeadOwners } from './claim.ts';
import { findImportJob } from './jobs.ts';
import { DEFAULTS, executeJob, type RunnerOptions, type StopReason } from './execute.ts';

/**
 * The import runner: claims due jobs (woken by the 'imports' signal and by a poll that
 * also finds expired leases), runs at most IMPORT_CONCURRENCY at once, renews each
 * job's lease while it runs, and stops a job on cancel, timeout or shutdown.
 */
export function createImportRunner(services: Services, runnerOptions: RunnerOptions = {}): Worker {
  const { db, config, log, signals } = services;
  const options = { ...DEFAULTS, ...runnerOptions };
  const owner = ownerName(randomBytes(4).toString('hex'));
  const queue = new PQueue({ concurrency: config.importConcurrency });
  const running = new Map<number, AbortController>();
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;
  let claiming: Promise<void> | null = null;
  let again = false;

  const wake = () => {
    if (stopping) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = claim()
      .catch((err) => log.error({ err }, 'import claim failed'))
      .finally(() => {
        claiming = null;
        if (again) {
          again = false;
          wake();
        }
      });
  };

  async function claim() {
    const free = config.importConcurrency - running.size;
    if (free <= 0) return;
    // One organization may hold every slot but one, so another organization's job can always start.
    const perOrg = Math.max(1, config.importConcurrency - 1);
    for (const id of await claimImportJobs(db, owner, free, options.leaseMs, perOrg)) {
      // Claimed while stop() ran: give it straight back rather than start work nobody waits for.
      if (stopping) {
        await releaseJob(db, id, owner, { attempts: db.raw('attempts - 1') });
        continue;
      }
      const controller = new AbortController();
      running.set(id, controller);
      void queue.add(() => run(id, controller));
    }
  }

  async function run(id: number, controller: AbortController) {
    const heartbeat = setInterval(() => {
      renewLease(db, id, owner, options.leaseMs).then(
        (held) => held || controller.abort('canceled' satisfies StopReason),
        () => {},
      );
    }, Math.max(200, Math.floor(options.leaseMs / 3)));
    let deadline: NodeJS.Timeout | undefined;
    try {
      const job = await findImportJob(db, id);
      if (!job || job.finished_at !== null || job.locked_by !== owner) return;
      const left = (job.started_at ?? Date.now()) + config.importTimeoutMs - Date.now();
      deadline = setTimeout(() => controller.abort('timeout' satisfies StopReason), Math.max(0, left));
      log.info({ import_id: id, source_url: job.source_url, attempt: job.attempts }, 'import started');
      await executeJob(services, job, owner, options, controller.signal);
    } catch (err) {
      log.error({ err, import_id: id }, 'import runner error');
    } finally {
      clearInterval(heartbeat);
      clearTimeout(deadline);
      running.delete(id);
      wake(); // a slot is free
    }
  }

  const onCancel = (id: number) => running.get(id)?.abort('canceled' satisfies StopReason);

  return {
    async start() {
      await sweepDeadOwners(db, owner);
      await sweepTempDirs(services);
      signals.on('imports', wake);
      signals.on('import-cancel', onCancel);
      timer = setInterval(wake, options.pollMs);
      timer.unref();
      wake();
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      signals.off('imports', wake);
      signals.off('import-cancel', onCancel);
      for (const controller of running.values()) controller.abort('shutdown' satisfies StopReason);
      await claiming;
      await queue.onIdle();
    },
  };
}

/** Removes temporary copies of jobs that have finished (left by a crash at the wrong moment). */
async function sweepTempDirs({ db, config }: Services): Promise<void> {
  const dir = path.join(config.reposDir, '.imports');
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const m = /^job-(\d+)\.git$/.exec(name);
    if (!m) continue;
    const row = await db('import_jobs').where('id', Number(m[1])).first('finished_at');
    if (!row || row.finished_at !== null) await fs.rm(path.join(dir, name), { recursive: true, force: true });
  }
}
