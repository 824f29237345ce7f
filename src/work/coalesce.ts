/** A task run one at a time, once more for every burst of wakes that came while it ran. */
export interface Coalesced {
  /** Runs the task now, or once more after the running one ends. */
  wake(): void;
  /** True while the task runs. */
  readonly running: boolean;
  /** No new runs; resolves when the running one (and its repeats) end. */
  stop(): Promise<void>;
  /** Resolves when the running one (and its repeats) end; the next wake runs it again. */
  idle(): Promise<void>;
}

/**
 * The one place of the rule "woken while working → work again": a wake while `task`
 * runs sets a flag, and the task runs once more when it ends, so a burst of wakes costs
 * one extra run, never one each, and a wake is never lost (work announced during a
 * claim may be missed by that claim). A failing run is reported to `onError` and does
 * not end the series. `settled` runs when a series ends (not after stop).
 */
export function coalesce(task: () => Promise<void>, o: { onError: (err: unknown) => void; settled?: () => void }): Coalesced {
  let stopping = false;
  let again = false;
  let series: Promise<void> | null = null;

  async function runSeries() {
    do {
      again = false;
      try {
        await task();
      } catch (err) {
        o.onError(err);
      }
    } while (again && !stopping);
    // In the same turn as the last look at `again`: a wake from here on starts a new series
    // (cleared a turn later, in a .finally, it would fall in between and be lost).
    series = null;
    if (!stopping) o.settled?.();
  }

  return {
    wake() {
      if (stopping) return;
      if (series) {
        again = true;
        return;
      }
      series = runSeries();
    },
    get running() {
      return series !== null;
    },
    async stop() {
      stopping = true;
      await series;
    },
    async idle() {
      await series;
    },
  };
}
