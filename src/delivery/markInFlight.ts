import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { preparedQuery } from './postgres.ts';
import { mainConnectionRunner, type SqliteRunner } from './sqlite.ts';

const MARK = `UPDATE deliveries SET in_flight = true WHERE id = $1 AND lease_owner = $2 AND claims = $3`;
const MARK_SQLITE = `UPDATE deliveries SET in_flight = 1 WHERE id = ? AND lease_owner = ? AND claims = ?`;

/**
 * Marks the attempt of a claim as started, before it is sent, so that if this node dies
 * during it the next claim counts an interruption (claim.ts). Only deliveries already
 * interrupted once go through here, so the common path makes no such write. Returns
 * false when the claim is no longer the delivery's latest (its lease was taken over):
 * then nothing may be sent.
 */
export async function markInFlight(db: Db, owner: string, id: number, claims: number, sqlite: SqliteRunner = mainConnectionRunner(db)): Promise<boolean> {
  if (isPostgres(db)) return (await preparedQuery(db, 'wharf_mark_in_flight', MARK, [id, owner, claims])).rowCount === 1;
  const [changes] = (await sqlite([{ sql: MARK_SQLITE, params: [id, owner, claims], mode: 'run' }], false)) as number[];
  return changes === 1;
}
