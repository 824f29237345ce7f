import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { claimUpTo, orgCap, runningHere } from '../work/fairClaims.ts';
import { countRows } from '../db/rows.ts';
import { isDeadPredecessor } from '../work/nodeId.ts';
import { toPushMirror, type PushMirror, type PushMirrorRow, type SyncStatus } from './store.ts';
import { rawRows } from '../db/results.ts';

// One statement claims one due mirror (STYLE §6): not parked, next_sync_at passed, nobody
// holding a live lease. A lease still set when claimed (it ran out) means the node that
// held it died mid-sync: the claim counts an interruption, so a mirror whose sync kills
// its node is parked after 3 instead of taken up forever. If this process dies after the
// claim, the lease runs out (or a restart on the same host sweeps it at once) and the
// sync runs again: a sync is idempotent (a mirror push of the refs as they are then).

const RUNNING_HERE = (org: string) => runningHere('push_mirrors', org);

/**
 * Claims up to `limit` due push mirrors for `owner` with a lease of `leaseMs`, one
 * statement each. Fair between organizations: the mirror claimed is one of the
 * organization with the fewest syncs running on this node (then the longest due), and an
 * organization runs at most `perOrg` syncs on a node, so one organization's stalled
 * remotes cannot hold every slot while another organization's mirror waits.
 */
export async function claimPushMirrors(db: Db, owner: string, limit: number, leaseMs: number, perOrg = Infinity): Promise<PushMirror[]> {
  return claimUpTo(limit, () => claimOne(db, owner, leaseMs, orgCap(perOrg)));
}

async function claimOne(db: Db, owner: string, leaseMs: number, perOrg: number): Promise<PushMirror | null> {
  const now = Date.now();
  const set = 'interruptions = interruptions + CASE WHEN locked_by IS NULL THEN 0 ELSE 1 END, locked_by = ?, lease_expires_at = ?';
  const pick = `SELECT m.id FROM push_mirrors m JOIN repositories o ON o.id = m.repository_id
    WHERE m.parked_at IS NULL AND m.next_sync_at <= ? AND (m.locked_by IS NULL OR m.lease_expires_at < ?) AND ${RUNNING_HERE('o.org_id')} < ?
    ORDER BY ${RUNNING_HERE('o.org_id')}, m.next_sync_at, m.id LIMIT 1`;
  const values = [owner, now + leaseMs, now, now, owner, now, perOrg, owner, now];
  if (isPostgres(db)) {
    const res = await db.raw(
      `UPDATE push_mirrors SET ${set} FROM (${pick} FOR UPDATE OF m SKIP LOCKED) AS due WHERE push_mirrors.id = due.id RETURNING push_mirrors.*`,
      values,
    );
    const rows = rawRows<PushMirrorRow>(res);
    return rows.length ? toPushMirror(rows[0]) : null;
  }
  const rows = rawRows<PushMirrorRow>(await db.raw(`UPDATE push_mirrors SET ${set} WHERE id IN (${pick}) RETURNING *`, values));
  return rows.length ? toPushMirror(rows[0]) : null;
}

/** Extends the lease `owner` holds on a mirror; false when it no longer holds it (deleted, or taken over). */
export async function renewPushMirrorLease(db: Db, id: number, owner: string, leaseMs: number): Promise<boolean> {
  return (
    (await db('push_mirrors')
      .where({ id, locked_by: owner })
      .update({ lease_expires_at: Date.now() + leaseMs })) > 0
  );
}

/**
 * Writes a sync's outcome and releases the lease, only while `owner` still holds it. The
 * next sync is due an interval from now, unless a push came while this one ran
 * (`generation` moved since the claim): that push made it due already. A crash before
 * this write leaves the lease to run out and the sync to run again.
 */
export async function finishPushMirrorSync(
  db: Db,
  mirror: PushMirror,
  owner: string,
  status: SyncStatus,
  error: string | null,
  startedAt: number,
): Promise<boolean> {
  const now = Date.now();
  const n = await db('push_mirrors')
    .where({ id: mirror.id, locked_by: owner })
    .update({
      locked_by: null,
      lease_expires_at: null,
      interruptions: 0,
      last_sync_at: startedAt,
      last_sync_status: status,
      last_error: error,
      next_sync_at: db.raw('CASE WHEN generation = ? THEN ? ELSE next_sync_at END', [mirror.generation, now + mirror.interval_ms]),
      updated_at: now,
    });
  return n > 0;
}

/** Gives a mirror back unsynced (a stopping node): due again at once for any node. */
export async function releasePushMirror(db: Db, id: number, owner: string): Promise<void> {
  await db('push_mirrors').where({ id, locked_by: owner }).update({ locked_by: null, lease_expires_at: null });
}

/** Parks a mirror whose node died in its last syncs: failed, visible, never claimed again by itself. */
export async function parkPushMirror(db: Db, id: number, owner: string, reason: string): Promise<void> {
  const now = Date.now();
  await db('push_mirrors')
    .where({ id, locked_by: owner })
    .update({ locked_by: null, lease_expires_at: null, parked_at: now, last_sync_status: 'failed', last_error: `parked: ${reason}`, updated_at: now });
}

/**
 * Frees mirrors held by processes of this host that are gone (a crash or SIGKILL), each
 * counting an interruption, so a restart syncs them at once instead of waiting for their
 * leases to run out (as the import runner's sweep does).
 */
export async function sweepDeadPushMirrorOwners(db: Db, self: string): Promise<number> {
  const owners: string[] = (await db('push_mirrors').whereNotNull('locked_by').distinct('locked_by')).map((r: { locked_by: string }) => r.locked_by);
  let freed = 0;
  for (const owner of owners) {
    if (!isDeadPredecessor(owner, self)) continue;
    freed += await db('push_mirrors')
      .where({ locked_by: owner })
      .update({ locked_by: null, lease_expires_at: null, interruptions: db.raw('interruptions + 1') });
  }
  return freed;
}

/** How many push mirrors are parked, for /metrics' wharf_parked{kind="push_mirror"}. */
export async function parkedPushMirrors(db: Db): Promise<number> {
  return countRows(db('push_mirrors').whereNotNull('parked_at'));
}
