import pg from 'pg';
import type { Logger } from 'pino';

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
