import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import type { Worker } from './worker.ts';

/**
 * Takes this period's turn of a periodic job for `node`: true on the one node whose
 * statement moves the job's last_run_at, when it is `everyMs` or more before `now`, to
 * `now`; false on every other (the turn is taken, or not due yet). One conditional UPDATE:
 * on Postgres a second node's update waits for the first's row lock, then reads the moved
 * time and matches nothing, so two nodes never take one turn. The period is each node's
 * own setting (the same on every node in practice), so a node started with a shorter one
 * is not held to the longer one of the node before. A node that dies while it runs its
 * turn costs that period's run; the next turn falls due as usual.
 */
export async function takeTurn(db: Db, job: string, node: string, now: number, everyMs: number): Promise<boolean> {
  await db('periodic_jobs').insert({ name: job, last_run_at: 0 }).onConflict('name').ignore();
  const moved = await db('periodic_jobs')
    .where('name', job)
    .where('last_run_at', '<=', now - everyMs)
    .update({ last_run_at: now, last_node: node });
  return moved > 0;
}

/** The longest a node waits between looks for its turn: a turn is taken at most this late. */
const MAX_LOOK_MS = 60_000;

/**
 * A job shared by every node, run on the turns this node takes (takeTurn): it looks about
 * four times a period (at most every minute) and at start; a failure is logged, and the
 * next turn comes a period later all the same. `run` gets the time its turn was taken at
 * (the last_run_at it wrote), which its log line names: turns are a period apart, while
 * the lines, written when a run ends, are as far apart as the runs' lengths allow.
 */
export function periodicWorker(o: { db: Db; job: string; node: string; everyMs: number; run: (turnAt: number) => Promise<void>; log: Logger }): Worker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const look = () => {
    running ??= (async () => {
      try {
        const now = Date.now();
        if (await takeTurn(o.db, o.job, o.node, now, o.everyMs)) await o.run(now);
      } catch (err) {
        o.log.warn({ err, job: o.job }, 'periodic job failed');
      } finally {
        running = undefined;
      }
    })();
  };
  return {
    async start() {
      timer = setInterval(look, Math.min(MAX_LOOK_MS, Math.max(50, Math.floor(o.everyMs / 4))));
      timer.unref();
      look();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
