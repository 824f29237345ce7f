import type { Logger } from 'pino';
import type { Db } from '../../db/connect.ts';
import { coalesce } from '../../work/coalesce.ts';

/** The Postgres channel on which new deliveries are announced to every process (the dispatcher LISTENs through src/work/wakeSources.ts). */
export const CHANNEL = 'wharf_deliveries';

/**
 * Returns a function that announces new deliveries to every process on the same Postgres
 * (call it after the commit that wrote them). Announcements made while one is being sent
 * are folded into one more, so a burst of commits costs two NOTIFYs, not one each.
 */
export function announcer(db: Db, log: Logger): () => void {
  const notify = coalesce(
    async () => {
      await db.raw(`NOTIFY ${CHANNEL}`);
    },
    { onError: (err) => log.warn({ err }, 'could not announce deliveries') },
  );
  return () => notify.wake();
}
