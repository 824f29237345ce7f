import type { Db } from '../db/connect.ts';

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
