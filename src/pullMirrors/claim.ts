import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { claimUpTo, orgCap, runningHere } from '../work/fairClaims.ts';
import { isDeadPredecessor } from '../work/nodeId.ts';
import { NEVER } from './state.ts';
import { rawRows } from '../db/results.ts';

// One statement claims one due mirror (STYLE §6): due when its next sync time has come or
// a sync of it left ref updates half done (`pending`; not for a parked mirror, which waits
// for a request), and nobody holds a live lease on it.
// A mirror claimed while still locked (its lease ran out) was interrupted: its node died
// or froze mid-sync; `interruptions` counts it, so a mirror that kills its node is parked.

const RUNNING_HERE = (org: string) => runningHere('repository_mirrors', org);

/**
 * Claims up to `limit` due mirrors for `owner` with a lease of `leaseMs`; returns their
 * repository ids. Fair between organizations: the mirror claimed is one of the
 * organization with the fewest syncs running on this node (then the longest due), and an
 * organization runs at most `perOrg` syncs on a node, so one organization's slow sources
 * cannot hold every slot while another organization's mirror waits.
 */
export async function claimMirrors(db: Db, owner: string, limit: number, leaseMs: number, perOrg = Infinity): Promise<number[]> {
  return claimUpTo(limit, () => claimOne(db, owner, leaseMs, orgCap(perOrg)));
}

async function claimOne(db: Db, owner: string, leaseMs: number, perOrg: number): Promise<number | null> {
  const now = Date.now();
  const pick = `SELECT m.id FROM repository_mirrors m JOIN repositories o ON o.id = m.repository_id
    WHERE (m.next_sync_at <= ? OR (m.pending IS NOT NULL AND m.next_sync_at < ?)) AND (m.locked_by IS NULL OR m.lease_expires_at < ?)
      AND ${RUNNING_HERE('o.org_id')} < ?
    ORDER BY ${RUNNING_HERE('o.org_id')}, m.next_sync_at, m.id LIMIT 1${isPostgres(db) ? ' FOR UPDATE OF m SKIP LOCKED' : ''}`;
  const result = await db.raw(
    `UPDATE repository_mirrors SET interruptions = interruptions + CASE WHEN locked_by IS NULL THEN 0 ELSE 1 END, locked_by = ?, lease_expires_at = ?, updated_at = ?
     WHERE id = (${pick}) RETURNING repository_id`,
    [owner, now + leaseMs, now, now, NEVER, now, owner, now, perOrg, owner, now],
  );
  const rows = rawRows<{ repository_id: number }>(result);
  return rows.length ? Number(rows[0].repository_id) : null;
}

/** Extends the lease `owner` holds on a mirror; false when it no longer holds it (the cutover, or taken over). */
export async function renewMirrorLease(db: Db, repositoryId: number, owner: string, leaseMs: number): Promise<boolean> {
  const now = Date.now();
  return (
    (await db('repository_mirrors')
      .where({ repository_id: repositoryId, locked_by: owner })
      .update({ lease_expires_at: now + leaseMs })) > 0
  );
}

/** Gives a mirror back without syncing it (claimed while stopping, or a shutdown mid-sync): due again at once. */
export async function releaseMirror(db: Db, repositoryId: number, owner: string, fields: Record<string, unknown> = {}): Promise<void> {
  await db('repository_mirrors')
    .where({ repository_id: repositoryId, locked_by: owner })
    .update({ ...fields, locked_by: null, lease_expires_at: null, updated_at: Date.now() });
}

/**
 * Frees mirrors held by processes of this host that are gone (a crash or SIGKILL), so a
 * restart takes them up at once instead of waiting for their lease; each counts an interruption.
 */
export async function sweepDeadMirrorOwners(db: Db, self: string): Promise<number> {
  const owners: string[] = (await db('repository_mirrors').whereNotNull('locked_by').distinct('locked_by')).map((r: { locked_by: string }) => r.locked_by);
  let freed = 0;
  for (const owner of owners) {
    if (!isDeadPredecessor(owner, self)) continue;
    freed += await db('repository_mirrors')
      .where({ locked_by: owner })
      .update({ locked_by: null, lease_expires_at: null, interruptions: db.raw('interruptions + 1') });
  }
  return freed;
}
