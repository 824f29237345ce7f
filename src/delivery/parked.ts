import type { Db } from '../db/connect.ts';

/** How many deliveries are parked (failed with a `parked:` error), for /metrics' wharf_parked{kind="delivery"}; the partial index deliveries_parked answers it. */
export async function parkedDeliveries(db: Db): Promise<number> {
  const [row] = (await db('deliveries').where('status', 'failed').where('error', 'like', 'parked:%').count({ n: '*' })) as any[];
  return Number(row.n);
}
