import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';

/** The Postgres channel on which new deliveries are announced to every process. */
export const CHANNEL = 'wharf_deliveries';

/** A LISTEN connection that calls `onNotify` for every announcement, reconnecting when it drops. */
export interface Listener {
  close(): Promise<void>;
}

/**
 * Listens on CHANNEL with a connection of its own (a pooled one would be handed back
 * and lose the LISTEN). A dropped connection is reopened after a second; meanwhile the
 * dispatcher's timer still finds the work, only later.
 */
export function listenForDeliveries(databaseUrl: string, onNotify: () => void, log: Logger): Listener {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const open = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('error', (err) => {
      log.warn({ err: { message: err.message } }, 'delivery listener connection lost');
      c.end().catch(() => {});
      if (client === c) client = null;
      if (!closed) retry = setTimeout(open, 1000);
    });
    c.on('notification', () => onNotify());
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      if (closed) await c.end();
      else {
        client = c;
        onNotify(); // work may have been announced while we were not listening
      }
    } catch (err) {
      log.warn({ err: { message: (err as Error).message } }, 'delivery listener could not connect');
      c.end().catch(() => {});
      if (!closed) retry = setTimeout(open, 1000);
    }
  };
  void open();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}

/**
 * Returns a function that announces new deliveries to every process on the same Postgres
 * (call it after the commit that wrote them). Announcements made while one is being sent
 * are folded into one more, so a burst of commits costs two NOTIFYs, not one each.
 */
export function announcer(db: Db, log: Logger): () => void {
  let sending = false;
  let again = false;
  return function announce() {
    if (sending) {
      again = true;
      return;
    }
    sending = true;
    void (async () => {
      try {
        do {
          again = false;
          await db.raw(`NOTIFY ${CHANNEL}`);
        } while (again);
      } catch (err) {
        log.warn({ err }, 'could not announce deliveries');
      } finally {
        sending = false;
      }
    })();
  };
}
