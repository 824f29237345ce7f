import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';

/** The Postgres channel on which new push records are announced to every node. */
export const PUSH_CHANNEL = 'wharf_push_records';

/**
 * LISTENs on PUSH_CHANNEL with a connection of its own and calls `onNotify` for each
 * announcement; a dropped connection is reopened after a second (meanwhile the
 * recorder's poll still finds the work, only later). Returns a closer.
 */
export function listenForPushes(databaseUrl: string, onNotify: () => void, log: Logger): () => Promise<void> {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const again = (c: pg.Client, message: string, err: Error) => {
    log.warn({ err: { message: err.message } }, message);
    c.end().catch(() => {});
    if (client === c) client = null;
    if (!closed) retry = setTimeout(open, 1000);
  };
  const open = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('error', (err) => again(c, 'push record listener connection lost', err));
    c.on('notification', () => onNotify());
    try {
      await c.connect();
      await c.query(`LISTEN ${PUSH_CHANNEL}`);
      if (closed) await c.end();
      else {
        client = c;
        onNotify(); // a push may have landed while we were not listening
      }
    } catch (err) {
      again(c, 'push record listener could not connect', err as Error);
    }
  };
  void open();
  return async () => {
    closed = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
    client = null;
  };
}

/** Announces a new push record to every node on the same Postgres (after its commit). */
export async function announcePush(db: Db, log: Logger): Promise<void> {
  await db.raw(`NOTIFY ${PUSH_CHANNEL}`).catch((err) => log.warn({ err }, 'could not announce a push record'));
}
