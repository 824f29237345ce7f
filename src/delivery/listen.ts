import type { Logger } from 'pino';
import type { Db } from '../db/connect.ts';
import { listenOn, type Listener } from '../db/listen.ts';

export type { Listener };

/** The Postgres channel on which new deliveries are announced to every process. */
export const CHANNEL = 'wharf_deliveries';

/** Listens on CHANNEL and calls `onNotify` for every announcement (see listenOn). */
export function listenForDeliveries(databaseUrl: string, onNotify: () => void, log: Logger): Listener {
  return listenOn(databaseUrl, CHANNEL, onNotify, log, 'delivery');
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
