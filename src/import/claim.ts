import os from 'node:os';
import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';

// One statement claims due jobs and counts the attempt (STYLE §6). A job is due when
// it has not finished, its backoff has passed, and nobody holds a live lease on it.
// If this process dies after the claim, the lease runs out (or a restart on the same
// host sweeps it at once) and the job is claimed again, its attempt counted again.

/** Claims up to `limit` due jobs for `owner` with a lease of `leaseMs`; returns their ids. */
export async function claimImportJobs(db: Db, owner: string, limit: number, leaseMs: number): Promise<number[]> {
  const now = Date.now();
  const set = 'locked_by = ?, lease_expires_at = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ?';
  const due = 'finished_at IS NULL AND run_after <= ? AND (locked_by IS NULL OR lease_expires_at < ?)';
  const values = [owner, now + leaseMs, now, now, now, now, limit];
  if (isPostgres(db)) {
    const res = await db.raw(
      `UPDATE import_jobs SET ${set} FROM (SELECT id FROM import_jobs WHERE ${due} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED) AS due
       WHERE import_jobs.id = due.id RETURNING import_jobs.id`,
      values,
    );
    return res.rows.map((r: any) => Number(r.id));
  }
  const rows = await db.raw(`UPDATE import_jobs SET ${set} WHERE id IN (SELECT id FROM import_jobs WHERE ${due} ORDER BY id LIMIT ?) RETURNING id`, values);
  return rows.map((r: any) => Number(r.id));
}

/** Extends the lease of a job `owner` holds; false when it no longer holds it (canceled, or taken over). */
export async function renewLease(db: Db, id: number, owner: string, leaseMs: number, fields: Record<string, unknown> = {}): Promise<boolean> {
  const now = Date.now();
  const n = await db('import_jobs')
    .where({ id, locked_by: owner })
    .whereNull('finished_at')
    .update({ ...fields, lease_expires_at: now + leaseMs, updated_at: now });
  return n > 0;
}

/** Gives a job back without finishing it (shutdown, or a retry after `delayMs`). */
export async function releaseJob(db: Db, id: number, owner: string, fields: Record<string, unknown> = {}, delayMs = 0): Promise<void> {
  const now = Date.now();
  await db('import_jobs')
    .where({ id, locked_by: owner })
    .whereNull('finished_at')
    .update({ ...fields, locked_by: null, lease_expires_at: null, run_after: now + delayMs, updated_at: now });
}

/** Ends a job `owner` holds as failed; its credentials are dropped with it. */
export async function failJob(db: Db, id: number, owner: string, error: string): Promise<boolean> {
  const now = Date.now();
  const n = await db('import_jobs')
    .where({ id, locked_by: owner })
    .whereNull('finished_at')
    .update({ status: 'failed', error, credentials: null, locked_by: null, lease_expires_at: null, finished_at: now, updated_at: now });
  return n > 0;
}

/** This process's owner name: host, pid and a random part. */
export function ownerName(random: string): string {
  return `${os.hostname()}:${process.pid}:${random}`;
}

/**
 * Frees jobs held by processes of this host that are gone (a crash or SIGKILL), so a
 * restart takes them up at once instead of waiting for their lease to run out.
 */
export async function sweepDeadOwners(db: Db, self: string): Promise<number> {
  const prefix = `${os.hostname()}:`;
  const owners: string[] = (await db('import_jobs').whereNull('finished_at').whereNotNull('locked_by').distinct('locked_by')).map((r: any) => r.locked_by);
  let freed = 0;
  for (const owner of owners) {
    if (owner === self || !owner.startsWith(prefix)) continue;
    const pid = Number(owner.slice(prefix.length).split(':')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || (pid !== process.pid && alive(pid))) continue;
    freed += await db('import_jobs').where({ locked_by: owner }).whereNull('finished_at').update({ locked_by: null, lease_expires_at: null });
  }
  return freed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: any) {
    return err?.code === 'EPERM';
  }
}
