import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import { listenOn } from '../db/listen.ts';

/** The Postgres channel on which new push records are announced to every node. */
export const PUSH_CHANNEL = 'wharf_push_records';

/** LISTENs on PUSH_CHANNEL and calls `onNotify` for each announcement (see listenOn); returns a closer. */
export function listenForPushes(databaseUrl: string, onNotify: () => void, log: Logger): () => Promise<void> {
  const listener = listenOn(databaseUrl, PUSH_CHANNEL, onNotify, log, 'push record');
  return () => listener.close();
}

/** Announces a new push record to every node on the same Postgres (after its commit). */
export async function announcePush(db: Db, log: Logger): Promise<void> {
  await db.raw(`NOTIFY ${PUSH_CHANNEL}`).catch((err) => log.warn({ err }, 'could not announce a push record'));
}
