import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { claimUpTo, orgCap } from '../work/fairClaims.ts';
import { isDeadPredecessor } from '../work/nodeId.ts';
import type { Config } from '../config.ts';
import { raiseImportEnded } from './events.ts';
import type { ImportFailure } from './failure.ts';
import { rawRows } from '../db/results.ts';

// One statement claims one due job and counts the attempt (STYLE §6). A job is due when
// it has not finished, its backoff has passed, and nobody holds a live lease on it.
// If this process dies after the claim, the lease runs out (or a restart on the same
// host sweeps it at once) and the job is claimed again, its attempt counted again and
// the death counted as an interruption (a job still locked had a run in flight), so
// parked.ts can stop a job that kills its node from running forever.
//
// Fairness: the job claimed is that of the organization with the fewest jobs running
// (then the oldest), and an organization never holds more than `perOrg` live leases,
// so one organization's slow sources cannot keep every other organization queued.

const LIVE = (org: string) =>
  `(SELECT COUNT(*) FROM import_jobs r WHERE r.target_org_id = ${org} AND r.finished_at IS NULL AND r.locked_by IS NOT NULL AND r.lease_expires_at >= ?)`;

/** Claims up to `limit` due jobs for `owner` with a lease of `leaseMs`, at most `perOrg` running per organization; returns their ids. */
export async function claimImportJobs(db: Db, owner: string, limit: number, leaseMs: number, perOrg = Infinity): Promise<number[]> {
  return claimUpTo(limit, () => claimOne(db, owner, leaseMs, orgCap(perOrg)));
}

async function claimOne(db: Db, owner: string, leaseMs: number, perOrg: number): Promise<number | null> {
  const now = Date.now();
  // SET reads the row as it was: a job still locked (its lease ran out) was interrupted.
  const set =
    'interruptions = interruptions + CASE WHEN locked_by IS NULL THEN 0 ELSE 1 END, locked_by = ?, lease_expires_at = ?, attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ?';
  const pick = `SELECT j.id FROM import_jobs j
    WHERE j.finished_at IS NULL AND j.run_after <= ? AND (j.locked_by IS NULL OR j.lease_expires_at < ?) AND ${LIVE('j.target_org_id')} < ?
    ORDER BY ${LIVE('j.target_org_id')}, j.id LIMIT 1`;
  const values = [owner, now + leaseMs, now, now, now, now, now, perOrg, now];
  if (isPostgres(db)) {
    const res = await db.raw(
      `UPDATE import_jobs SET ${set} FROM (${pick} FOR UPDATE OF j SKIP LOCKED) AS due WHERE import_jobs.id = due.id RETURNING import_jobs.id`,
      values,
    );
    const rows = rawRows<{ id: number }>(res);
    return rows.length ? Number(rows[0].id) : null;
  }
  const rows = rawRows<{ id: number }>(await db.raw(`UPDATE import_jobs SET ${set} WHERE id IN (${pick}) RETURNING id`, values));
  return rows.length ? Number(rows[0].id) : null;
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

/**
 * Ends a job `owner` holds as failed, raising its `import` failed event in the same
 * transaction. Its credentials stay sealed with it, for a retry with the same settings
 * (retry.ts), which takes them over.
 */
export async function failJob(db: Db, config: Config, id: number, owner: string, failure: ImportFailure): Promise<boolean> {
  return db.transaction(async (trx) => {
    const now = Date.now();
    const n = await trx('import_jobs').where({ id, locked_by: owner }).whereNull('finished_at').update({
      status: 'failed',
      error: failure.message,
      error_code: failure.code,
      error_reason: failure.reason,
      locked_by: null,
      lease_expires_at: null,
      finished_at: now,
      updated_at: now,
    });
    if (n > 0) await raiseImportEnded(trx, config, id, 'failed');
    return n > 0;
  });
}

/**
 * Frees jobs held by processes of this host that are gone (a crash or SIGKILL), so a
 * restart takes them up at once instead of waiting for their lease to run out; each
 * counts an interruption (its run died with the process). Which holders are gone is
 * read from their node ids (src/work/nodeId.ts: host and pid). A crash during a sweep
 * leaves the rest locked: the next start sweeps them, or their leases run out.
 */
export async function sweepDeadOwners(db: Db, self: string): Promise<number> {
  const owners: string[] = (await db('import_jobs').whereNull('finished_at').whereNotNull('locked_by').distinct('locked_by')).map(
    (r: { locked_by: string }) => r.locked_by,
  );
  let freed = 0;
  for (const owner of owners) {
    if (!isDeadPredecessor(owner, self)) continue;
    freed += await db('import_jobs')
      .where({ locked_by: owner })
      .whereNull('finished_at')
      .update({ locked_by: null, lease_expires_at: null, interruptions: db.raw('interruptions + 1') });
  }
  return freed;
}
