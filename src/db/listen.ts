import pg from 'pg';
import type { Logger } from 'pino';

/** A LISTEN connection that calls its callback for every announcement, reconnecting when it drops. */
export interface Listener {
  close(): Promise<void>;
}

/**
 * LISTENs on a Postgres channel with a connection of its own (a pooled one would be
 * handed back and lose the LISTEN) and calls `onNotify` for each announcement, and once
 * after each (re)connection, as work may have been announced while nobody listened. A
 * dropped connection is reopened after a second; meanwhile the caller's poll still
 * finds the work, only later. `what` names the listener in log lines.
 */
export function listenOn(databaseUrl: string, channel: string, onNotify: () => void, log: Logger, what: string): Listener {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const again = (c: pg.Client, message: string, err: Error) => {
    log.warn({ err: { message: err.message } }, `${what} listener ${message}`);
    c.end().catch(() => {});
    if (client === c) client = null;
    if (!closed) retry = setTimeout(open, 1000);
  };
  const open = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('error', (err) => again(c, 'connection lost', err));
    c.on('notification', () => onNotify());
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      if (closed) await c.end();
      else {
        client = c;
        onNotify();
      }
    } catch (err) {
      again(c, 'could not connect', err as Error);
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
