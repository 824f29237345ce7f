import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';

/** The Postgres channel on which new push records are announced to every node (the recorder LISTENs through src/work/wakeSources.ts). */
export const PUSH_CHANNEL = 'wharf_push_records';

/** Announces a new push record to every node on the same Postgres (after its commit). */
export async function announcePush(db: Db, log: Logger): Promise<void> {
  await db.raw(`NOTIFY ${PUSH_CHANNEL}`).catch((err) => log.warn({ err }, 'could not announce a push record'));
}
