import type { Db } from '../../db/connect.ts';
import { isPostgres } from '../../db/connect.ts';
import { preparedQuery } from './postgres.ts';
import { mainConnectionRunner, type SqliteRunner } from './sqlite.ts';

const MARK = `UPDATE deliveries SET in_flight = $5, next_attempt_at = $4 WHERE id = $1 AND lease_owner = $2 AND claims = $3`;
const MARK_SQLITE = `UPDATE deliveries SET in_flight = ?, next_attempt_at = ? WHERE id = ? AND lease_owner = ? AND claims = ?`;

/**
 * Marks the attempt of a claim as started (`inFlight` true), before it is sent, so that if
 * this node dies during it the next claim counts an interruption (claim.ts); and as ended
 * (false) once it is answered or given up, before the result is written, so a death after
 * it (another attempt's, before the results are in) is not counted against it. Only
 * deliveries already interrupted once go through here, so the common path makes no such
 * write. The lease is renewed to `leaseEnd` in the same write: an attempt that waited for
 * its turn alone (attempt.ts) must not have its lease run out while it is being sent, or
 * this very process would claim it again and count an interruption that never happened.
 * Returns false when the claim is no longer the delivery's latest (its lease was taken
 * over): then nothing may be sent.
 */
export async function markInFlight(
  db: Db,
  owner: string,
  id: number,
  claims: number,
  inFlight: boolean,
  leaseEnd: number,
  sqlite: SqliteRunner = mainConnectionRunner(db),
): Promise<boolean> {
  if (isPostgres(db)) return (await preparedQuery(db, 'wharf_set_in_flight', MARK, [id, owner, claims, leaseEnd, inFlight])).rowCount === 1;
  const [changes] = (await sqlite([{ sql: MARK_SQLITE, params: [inFlight ? 1 : 0, leaseEnd, id, owner, claims], mode: 'run' }], false)) as number[];
  return changes === 1;
}
