import type { Services } from '../services.ts';
import type { Worker } from '../work/worker.ts';
import { isPostgres } from '../db/connect.ts';
import { createWorkLoop, type Running } from '../work/loop.ts';
import { nodeId } from '../work/nodeId.ts';
import { claimMirrors, releaseMirror, renewMirrorLease, sweepDeadMirrorOwners } from './claim.ts';
import { findMirror, NEVER } from './state.ts';
import { MAX_INTERRUPTIONS, syncMirror } from './sync.ts';
import { SIGNAL } from '../services.ts';

/** The Postgres channel a sync request is announced on. */
export const MIRROR_CHANNEL = 'wharf_mirrors';

/** Knobs of the runner; tests may shorten them. */
export interface MirrorRunnerOptions {
  /** How often to look for due mirrors (schedules falling due, expired leases), ms. */
  pollMs?: number;
  leaseMs?: number;
  /** Syncs at once per node. */
  slots?: number;
}

/**
 * The pull-mirror runner (SPEC §8.1.1) on the worker loop: claims due mirrors under a lease
 * (one node syncs a mirror at a time), renews the lease while a sync runs, and aborts a
 * sync when its lease is lost, at the cutover, or at shutdown.
 */
export function createMirrorRunner(services: Services, runnerOptions: MirrorRunnerOptions = {}): Worker {
  const { db, config, log, signals } = services;
  const options = { pollMs: 2000, leaseMs: 30_000, slots: 2, ...runnerOptions };
  const owner = nodeId(config.dataDir);

  async function run(repositoryId: number, { signal }: Running) {
    const mirror = await findMirror(db, repositoryId);
    if (!mirror || mirror.lockedBy !== owner) return;
    if (mirror.interruptions >= MAX_INTERRUPTIONS) {
      // Its node died in each of its last syncs: most likely this mirror kills it. Never by itself again.
      await releaseMirror(db, repositoryId, owner, {
        last_sync_status: 'failed',
        last_error: `parked: the node syncing this mirror stopped ${mirror.interruptions} times during its sync; it will not sync again by itself — request a sync to try again`,
        next_sync_at: NEVER,
      });
      log.error({ repository_id: repositoryId, source_url: mirror.sourceUrl, interruptions: mirror.interruptions }, 'mirror sync parked');
      return;
    }
    log.info({ repository_id: repositoryId, source_url: mirror.sourceUrl }, 'mirror sync started');
    try {
      await syncMirror(services, mirror, owner, signal);
    } finally {
      // A shutdown mid-sync (or any way out that kept the lease): given back, due again at once.
      await releaseMirror(db, repositoryId, owner);
    }
  }

  const loop = createWorkLoop<number>({
    // One organization runs at most every slot but one here, so another organization's mirror can always start.
    claim: (free) => claimMirrors(db, owner, free, options.leaseMs, Math.max(1, options.slots - 1)),
    run,
    renew: (id) => renewMirrorLease(db, id, owner, options.leaseMs),
    renewEveryMs: Math.max(200, Math.floor(options.leaseMs / 3)),
    giveBack: (id) => releaseMirror(db, id, owner),
    slots: options.slots,
    wakeOn: {
      signals: [[signals, SIGNAL.pullMirrors]],
      listen: isPostgres(db) ? { databaseUrl: config.databaseUrl, channel: MIRROR_CHANNEL, what: 'mirror sync', log } : undefined,
      pollMs: options.pollMs,
    },
    stopMode: 'abort',
    reasons: { stop: 'shutdown', leaseLost: 'lease-lost' },
    onError: (err, id) => log.error({ err, repository_id: id }, id === undefined ? 'mirror claim failed' : 'mirror sync error'),
  });

  const onStop = (repositoryId: number) => loop.abort(repositoryId, 'cutover');

  return {
    async start() {
      await sweepDeadMirrorOwners(db, owner);
      signals.on(SIGNAL.mirrorStop, onStop);
      loop.start();
    },
    async stop() {
      signals.off(SIGNAL.mirrorStop, onStop);
      await loop.stop();
    },
  };
}
