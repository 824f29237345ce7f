import PQueue from 'p-queue';
import { tidyAfterPush } from '../git/bare.ts';

/**
 * Repositories tidied side by side by one process after pushes (git/bare.ts tidyAfterPush:
 * `gc --auto`, then pack-refs). A `gc --auto` that repacks a big repository takes minutes of
 * a core; without a bound, a burst of pushes to many repositories would start as many
 * repacks at once and take the machine from the pushes and deliveries it serves. Two, so
 * one long repack never holds up every other repository's.
 */
export const HOUSEKEEPING_CONCURRENCY = 2;

/** What is owed to one repository: `gc --auto`, and pack-refs when any push owing it moved many refs. */
type Owed = { packRefs: boolean; onError: (err: unknown) => void };

/**
 * A queue of repositories owed housekeeping, at most `concurrency` run at once, each once
 * per wait: pushes to a repository that is already waiting its turn add nothing but their
 * pack-refs (so a thousand pushes to one repository are one gc, not a thousand). A
 * repository whose housekeeping has started is queued again by the next push, whose
 * objects that run may not have seen. A failing run is reported to the `onError` of the
 * push that queued it, and the queue goes on.
 */
export function housekeepingQueue(run: (dir: string, packRefs: boolean) => Promise<void>, concurrency = HOUSEKEEPING_CONCURRENCY) {
  const queue = new PQueue({ concurrency });
  const waiting = new Map<string, Owed>();
  return {
    /** Owes `dir` its housekeeping; returns at once. */
    schedule(dir: string, packRefs: boolean, onError: (err: unknown) => void): void {
      const owed = waiting.get(dir);
      if (owed) return void (owed.packRefs ||= packRefs);
      const entry: Owed = { packRefs, onError };
      waiting.set(dir, entry);
      void queue.add(async () => {
        waiting.delete(dir);
        await run(dir, entry.packRefs).catch(entry.onError);
      });
    },
    /** Resolves once nothing is queued or running (tests, shutdown). */
    idle: () => queue.onIdle(),
  };
}

/** The housekeeping of every push this process lands (pushes/land.ts): one queue, as the bound is the process's CPU. */
export const pushHousekeeping = housekeepingQueue(tidyAfterPush);
