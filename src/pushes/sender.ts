import type { Db } from '../db/connect.ts';

/** The pusher of a record as push events name it; null when unknown or since deleted. Read only. */
export async function pushSender(db: Db, senderId: number | null): Promise<{ id: number; login: string } | null> {
  if (senderId === null) return null;
  const row = await db('users').where('id', senderId).first('id', 'login');
  return row ? { id: Number(row.id), login: String(row.login) } : null;
}
