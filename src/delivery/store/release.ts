import type { Db } from '../../db/connect.ts';

/** A claimed delivery given back unattempted: held (`until` null) or put off to `until`. */
export interface Release {
  deliveryId: number;
  /** The claim's token: only the delivery's latest claim may give it back. */
  claims: number;
  until: number | null;
}

/**
 * Gives claimed deliveries back without an attempt (the gate held or put them off): their
 * lease ends, `claims` goes back to 0 (no attempt was in flight, so no interruption is
 * counted) and `attempts` stays as it was, so no attempt is spent. Checked against the
 * lease, as a result write is. A crash before this commits leaves the claim's lease to run
 * out: the delivery is claimed again and passes the gate again.
 */
export async function releaseClaims(db: Db, owner: string, batch: Release[]): Promise<number> {
  if (batch.length === 0) return 0;
  return db.transaction(async (trx) => {
    let n = 0;
    for (const r of batch) {
      n += await trx('deliveries')
        .where({ id: r.deliveryId, claims: r.claims, lease_owner: owner, status: 'pending' })
        .update({ next_attempt_at: r.until, claims: 0, in_flight: false, lease_owner: null });
    }
    return n;
  });
}
