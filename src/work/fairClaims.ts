// What the claims of slotted work (imports, pull mirror and push mirror syncs) share:
// claiming one item a statement up to the free slots, and the per-node count that an
// organization's share of those slots is measured in.

/** Claims with `claimOne` until `limit` items are claimed or none is due; one statement each. */
export async function claimUpTo<T>(limit: number, claimOne: () => Promise<T | null>): Promise<T[]> {
  const claimed: T[] = [];
  for (let i = 0; i < limit; i++) {
    const item = await claimOne();
    if (item === null) break;
    claimed.push(item);
  }
  return claimed;
}

/**
 * SQL counting the items of `table` (each with a `repository_id`) of one organization
 * that a node runs now: live leases (`locked_by`, `lease_expires_at`) it holds. `org` is
 * the SQL naming the organization's id; two parameters follow: the node, and now.
 */
export function runningHere(table: 'repository_mirrors' | 'push_mirrors', org: string): string {
  return `(SELECT COUNT(*) FROM ${table} r JOIN repositories rr ON rr.id = r.repository_id
     WHERE rr.org_id = ${org} AND r.locked_by = ? AND r.lease_expires_at >= ?)`;
}

/** `perOrg` as the claim statements take it: a number (no cap is a cap nobody reaches). */
export const orgCap = (perOrg: number) => (Number.isFinite(perOrg) ? perOrg : 1_000_000);
