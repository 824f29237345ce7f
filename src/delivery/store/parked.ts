import type { Db } from '../../db/connect.ts';
import { countRows } from '../../db/rows.ts';

/** How many deliveries are parked (failed with a `parked:` error), for /metrics' wharf_parked{kind="delivery"}; the partial index deliveries_parked answers it. */
export async function parkedDeliveries(db: Db): Promise<number> {
  return countRows(db('deliveries').where('status', 'failed').where('error', 'like', 'parked:%'));
}
