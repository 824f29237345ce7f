import type { Db } from '../../db/connect.ts';

/** When the next pending delivery falls due (a retry, or a lease running out), or null if none is pending. */
export async function nextDueAt(db: Db): Promise<number | null> {
  const row = await db('deliveries').where('status', 'pending').min({ at: 'next_attempt_at' }).first();
  return row?.at == null ? null : Number(row.at);
}
