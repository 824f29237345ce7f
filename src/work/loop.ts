import { coalesce } from './coalesce.ts';
import { heartbeat } from './heartbeat.ts';
import { wakeOn, type WakeSources } from './wakeSources.ts';

/** What a running item is handed: its abort signal, and a way to abort it itself (a deadline). */
export interface Running {
  signal: AbortSignal;
  abort(reason: unknown): void;
}

/** How one kind of leased work is claimed, run, renewed, woken and stopped. */
export interface WorkLoopOptions<T> {
  /** Claims up to `limit` due items under a lease (one statement per item or per batch, the caller's choice). */
  claim(limit: number): Promise<T[]>;
  /** Does one claimed item; handles its own failures (a throw is only logged through onError). */
  run(item: T, running: Running): Promise<void>;
  /** Renews an item's lease while it runs; false when the lease is no longer held. */
  renew?(item: T): Promise<boolean>;
  /** How often `renew` runs (a fraction of the lease, so a few misses do not lose it). */
  renewEveryMs?: number;
  /** Gives back an item claimed while the loop was stopping, rather than start work nobody waits for. */
  giveBack?(item: T): Promise<void>;
  /** Names an item for abort(); defaults to the item itself. */
  key?(item: T): unknown;
  /** Items run at once. */
  slots: number;
  /** What wakes the loop besides a freed slot. */
  wakeOn: WakeSources;
  /** On stop: 'drain' lets running items finish; 'abort' aborts their signals and waits for them to return. */
  stopMode: 'drain' | 'abort';
  /** The abort reasons items see: stop (abort mode) and a lost lease. Default 'shutdown' and 'lease-lost'. */
  reasons?: { stop?: unknown; leaseLost?: unknown };
  /** A failed claim or an item's run that threw. */
  onError(err: unknown, item?: T): void;
}

/** A started leased-work loop. */
export interface WorkLoop {
  /** Starts listening to the wake sources and claims at once. */
  start(): void;
  /** Claims now (or once more after the claim in progress). */
  wake(): void;
  /** Aborts the running item named `key`; false when none runs. */
  abort(key: unknown, reason: unknown): boolean;
  /** Resolves when the claims in progress (and their repeats) end. */
  idle(): Promise<void>;
  /** Items running now. */
  readonly running: number;
  /** Stops claiming, closes the wake sources, and waits for running items (drained or aborted). */
  stop(): Promise<void>;
}

/**
 * One worker loop (claim with a lease → run → renew while running → wake → stop), used
 * by the push recorder, the import runner and both mirror workers (the dispatcher, which
 * claims in large batches ahead of its slots, uses its coalescing part: see
 * delivery/runtime/claimLoop.ts).
 * Claims run one at a time (coalesce: a wake during a claim claims again after it, so
 * work announced mid-claim is not missed); each claims what free slots allow. A slot
 * freed wakes the loop.
 */
export function createWorkLoop<T>(o: WorkLoopOptions<T>): WorkLoop {
  const key = o.key ?? ((item: T) => item);
  const running = new Map<Promise<void>, { item: T; controller: AbortController }>();
  let stopping = false;
  let closeSources: (() => Promise<void>) | undefined;

  function launch(item: T) {
    const controller = new AbortController();
    const abort = (reason: unknown) => controller.abort(reason);
    const stopBeat = o.renew
      ? heartbeat(
          () => o.renew!(item),
          o.renewEveryMs ?? 1000,
          () => abort(o.reasons?.leaseLost ?? 'lease-lost'),
        )
      : () => {};
    const work: Promise<void> = Promise.resolve()
      .then(() => o.run(item, { signal: controller.signal, abort }))
      .catch((err) => o.onError(err, item))
      .finally(() => {
        stopBeat();
        running.delete(work);
        claims.wake(); // a slot is free
      });
    running.set(work, { item, controller });
  }

  async function claimPass() {
    while (!stopping && running.size < o.slots) {
      const limit = o.slots - running.size;
      const items = await o.claim(limit);
      for (const item of items) {
        if (stopping && o.giveBack) await o.giveBack(item).catch((err) => o.onError(err, item));
        else launch(item);
      }
      if (items.length < limit) break;
    }
  }

  const claims = coalesce(claimPass, { onError: (err) => o.onError(err) });

  return {
    start() {
      closeSources = wakeOn(o.wakeOn, () => claims.wake());
      claims.wake();
    },
    wake: () => claims.wake(),
    idle: () => claims.idle(),
    abort(k, reason) {
      for (const { item, controller } of running.values()) {
        if (key(item) === k) {
          controller.abort(reason);
          return true;
        }
      }
      return false;
    },
    get running() {
      return running.size;
    },
    async stop() {
      stopping = true;
      await closeSources?.();
      if (o.stopMode === 'abort') for (const { controller } of running.values()) controller.abort(o.reasons?.stop ?? 'shutdown');
      await claims.stop();
      // Items claimed during the last claim started after the aborts above: abort them too.
      if (o.stopMode === 'abort')
        for (const { controller } of running.values()) if (!controller.signal.aborted) controller.abort(o.reasons?.stop ?? 'shutdown');
      await Promise.all([...running.keys()]);
    },
  };
}
