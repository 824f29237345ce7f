import { coalesce } from '../../work/coalesce.ts';

/** The claim loop: claims due work in batches while there is room for it. */
export interface ClaimLoop {
  /** Claims now, or once the running pass ends (it runs again). */
  wake(): void;
  /**
   * New work was written: as wake, and if every place is taken, one claim of up to
   * `batchMin` items of tenants holding none (`claim(limit, true)`), so a newcomer is
   * never left waiting for places another tenant's slow work holds.
   */
  wakeForNew(): void;
  /** True while the last claim filled every free place: more work is probably due. */
  readonly moreDue: boolean;
  /** No new passes; resolves when the running one ends. */
  stop(): Promise<void>;
}

/**
 * Runs claim passes, one at a time: each claims as many items as there are free places
 * (`freeSlots`) and hands them to `start`, and claims again while the last claim came
 * back full. With work in flight it waits for `batchMin` free places rather than claim
 * one by one (fewer statements). A wake during a pass makes the pass run again (the
 * coalescing of src/work/coalesce.ts, shared with every worker). `settled` runs after
 * each series of passes (to arm a timer for what falls due later).
 *
 * The dispatcher keeps this loop rather than src/work/loop.ts: it claims ahead of its
 * slots in large batches, counts free places across a queue and a result writer, and
 * leases for the whole attempt (no heartbeat), none of which the general loop does at
 * no cost; it shares the loop's coalescing, wake sources and node ids.
 */
export function createClaimLoop<T>(o: {
  /** Claims up to `limit` items; `idle`: only of tenants holding none. */
  claim: (limit: number, idle: boolean) => Promise<T[]>;
  start: (item: T) => void;
  freeSlots: () => number;
  inFlight: () => number;
  batchMin: number;
  onError: (err: unknown) => void;
  settled: () => void;
}): ClaimLoop {
  let stopping = false;
  let moreDue = false;
  let newWork = false;

  async function pass() {
    while (!stopping) {
      const free = o.freeSlots();
      if (free <= 0 || (free < o.batchMin && o.inFlight() > 0)) {
        if (newWork) {
          newWork = false;
          for (const item of await o.claim(o.batchMin, true)) o.start(item);
        }
        break;
      }
      newWork = false; // a claim of every tenant's work, fairly ordered, takes the newcomer's first
      const claimed = await o.claim(free, false);
      moreDue = claimed.length === free;
      for (const item of claimed) o.start(item);
      if (!moreDue) break;
    }
  }

  const passes = coalesce(pass, { onError: o.onError, settled: o.settled });

  return {
    wake: () => passes.wake(),
    wakeForNew() {
      newWork = true;
      passes.wake();
    },
    get moreDue() {
      return moreDue;
    },
    async stop() {
      stopping = true;
      await passes.stop();
    },
  };
}
