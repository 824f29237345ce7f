/** The timer that wakes the claim loop when the next delivery falls due. */
export interface DueTimer {
  /** Re-arms the timer soon, once for many calls (a result or a claim pass may have changed the next due time). */
  want(): void;
  stop(): void;
}

/**
 * Sleeps until `nextDue()` (a retry falling due, a lease running out), at most
 * `idlePollMs`, then calls `fire`. The longest sleep is a poll: it catches work written
 * by a process that could not wake this one (SQLite, the CLI). `skip` says when no timer
 * is needed (work is known to be due and attempts in flight will claim it).
 */
export function createDueTimer(o: {
  nextDue: () => Promise<number | null>;
  fire: () => void;
  idlePollMs: number;
  skip: () => boolean;
  onError: (err: unknown) => void;
  debounceMs?: number;
}): DueTimer {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wanted: NodeJS.Timeout | undefined;

  async function arm() {
    if (stopped || o.skip()) return;
    let wait = o.idlePollMs;
    try {
      const due = await o.nextDue();
      if (due !== null) wait = Math.min(wait, Math.max(0, due - Date.now()));
    } catch (err) {
      o.onError(err);
    }
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(o.fire, wait);
  }

  return {
    want() {
      if (wanted || stopped) return;
      wanted = setTimeout(() => {
        wanted = undefined;
        void arm();
      }, o.debounceMs ?? 20);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(wanted);
    },
  };
}
