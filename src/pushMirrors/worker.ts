import type { Services } from '../services.ts';
import type { Worker, WorkerFactory } from '../work/worker.ts';
import { createWorkLoop, type Running } from '../work/loop.ts';
import { nodeId } from '../work/nodeId.ts';
import { claimPushMirrors, finishPushMirrorSync, parkPushMirror, releasePushMirror, renewPushMirrorLease, sweepDeadPushMirrorOwners } from './claim.ts';
import { describeSyncError, mirrorCredentials, syncPushMirror } from './sync.ts';
import type { PushMirror } from './store.ts';
import type { Credentials } from '../remote/url.ts';
import { SIGNAL } from '../services.ts';

/** Knobs of the push mirror worker. */
export interface PushMirrorWorkerOptions {
  /** Syncs run at once per process. */
  slots: number;
  leaseMs: number;
  /** How often the database is asked for due mirrors (intervals falling due, other nodes' pushes, expired leases). */
  pollMs: number;
  /** A sync whose git push or LFS transfer moves less than 1 KiB/s for this long fails (IMPORT_STALL_TIMEOUT, as imports and pull mirrors). */
  stallMs: number;
}

const DEFAULTS: Omit<PushMirrorWorkerOptions, 'stallMs'> = { slots: 2, leaseMs: 30_000, pollMs: 1000 };

/** Node deaths during one mirror's syncs after which it is parked (SPEC §7.9). */
const MAX_INTERRUPTIONS = 3;

/**
 * The push mirror worker (SPEC §8.1.2), on the worker loop: claims due mirrors under a
 * lease (one sync at a time per mirror, any node), renews it while the sync runs, and
 * writes the outcome. A failed sync is recorded (`failed`, a scrubbed `last_error`) and
 * tried again at the next trigger: the next push or the next interval. A mirror whose
 * node died in 3 syncs in a row is parked. A stopping node aborts its syncs and gives
 * the mirrors back.
 */
export function createPushMirrorWorker(services: Services, overrides: Partial<PushMirrorWorkerOptions> = {}): Worker {
  const { db, config, log } = services;
  const options: PushMirrorWorkerOptions = { ...DEFAULTS, stallMs: config.importStallTimeoutMs, ...overrides };
  const owner = nodeId(config.dataDir);

  async function run(mirror: PushMirror, { signal }: Running) {
    if (mirror.interruptions >= MAX_INTERRUPTIONS) {
      await parkPushMirror(
        db,
        mirror.id,
        owner,
        `the node syncing this push mirror stopped ${mirror.interruptions} times during a sync; it will not sync again by itself — ask for a sync to try again`,
      );
      return void log.error({ push_mirror: mirror.id, repository_id: mirror.repository_id }, 'push mirror parked after repeated node deaths');
    }
    const startedAt = Date.now();
    let credentials: Credentials | null = null;
    try {
      credentials = mirrorCredentials(services, mirror);
      const result = await syncPushMirror(services, mirror, credentials, signal, options.stallMs);
      await finishPushMirrorSync(db, mirror, owner, 'succeeded', null, startedAt);
      log.info(
        {
          push_mirror: mirror.id,
          repository_id: mirror.repository_id,
          url: mirror.url,
          lfs_objects: result.lfsObjects,
          lfs_missing: result.lfsMissing,
          ms: Date.now() - startedAt,
        },
        'push mirror synced',
      );
    } catch (err) {
      if (signal.aborted && signal.reason === 'shutdown') return void (await releasePushMirror(db, mirror.id, owner).catch(() => {}));
      if (signal.aborted) return void log.warn({ push_mirror: mirror.id }, 'push mirror sync stopped: the mirror was deleted or taken over');
      const error = describeSyncError(err, credentials);
      await finishPushMirrorSync(db, mirror, owner, 'failed', error, startedAt);
      log.warn({ push_mirror: mirror.id, repository_id: mirror.repository_id, url: mirror.url, error }, 'push mirror sync failed');
    }
  }

  const loop = createWorkLoop<PushMirror>({
    // One organization runs at most every slot but one here, so another organization's mirror can always start.
    claim: (limit) => claimPushMirrors(db, owner, limit, options.leaseMs, Math.max(1, options.slots - 1)),
    run,
    renew: (mirror) => renewPushMirrorLease(db, mirror.id, owner, options.leaseMs),
    renewEveryMs: Math.max(100, Math.floor(options.leaseMs / 3)),
    giveBack: (mirror) => releasePushMirror(db, mirror.id, owner),
    key: (mirror) => mirror.id,
    slots: options.slots,
    wakeOn: { signals: [[services.signals, SIGNAL.pushMirrors]], pollMs: options.pollMs },
    stopMode: 'abort',
    reasons: { stop: 'shutdown', leaseLost: 'lease-lost' },
    onError: (err, mirror) => log.error({ err, push_mirror: mirror?.id }, mirror ? 'push mirror sync error' : 'could not claim push mirrors'),
  });

  return {
    async start() {
      await sweepDeadPushMirrorOwners(db, owner);
      loop.start();
    },
    stop: () => loop.stop(),
  };
}

/** The worker as the server starts it. */
export const pushMirrorWorker: WorkerFactory = (services) => createPushMirrorWorker(services);
