import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { preparedQuery } from './postgres.ts';
import { mainConnectionRunner, type SqliteRunner } from './sqlite.ts';

/**
 * A claimed delivery with what its attempt needs: `attempts` already counts this one, and
 * the body (the delivery's own bytes for pings, else its event's) and the webhook's
 * current URL and secret come with it.
 */
export interface Claimed {
  id: number;
  guid: string;
  event: string;
  attempts: number;
  hookId: number;
  /** The exact bytes to send. */
  body: Buffer;
  url: string;
  secret: string;
}

/**
 * Claims up to `limit` due deliveries for this process in ONE statement, which also
 * returns what their attempts need: the attempt is counted and a lease taken
 * (lease_owner, and next_attempt_at moved to the lease's end).
 *
 * Guarantee (at-least-once): the claim commits before any byte is sent. If the process
 * dies between this claim and the result write, the row stays `pending` with its
 * next_attempt_at at the lease's end, so it falls due again by itself and another claim
 * (this process after a restart, or any other) sends it again with the same guid.
 * Postgres: FOR UPDATE SKIP LOCKED lets several processes claim side by side, never the
 * same row. SQLite: writers are serialized, so one UPDATE … RETURNING is atomic.
 * `firstDelayMs` is the schedule's delay before attempt 1, counted from creation.
 * A delivery whose webhook or event is gone (their rows take it with them) comes back
 * without a body or URL and is left out: there is nothing to send.
 */
export async function claimDue(db: Db, options: { owner: string; limit: number; now: number; leaseMs: number; firstDelayMs: number; sqlite?: SqliteRunner }): Promise<Claimed[]> {
  const { owner, limit, now, leaseMs, firstDelayMs, sqlite = mainConnectionRunner(db) } = options;
  // The first-delay condition only when there is a first delay: without it, the due index alone answers.
  const delayed = firstDelayMs > 0;
  const firstDue = now - firstDelayMs;
  let rows: any[];
  if (isPostgres(db)) {
    const [name, text] = delayed ? ['wharf_claim_due_delayed', CLAIM_POSTGRES_DELAYED] : ['wharf_claim_due', CLAIM_POSTGRES];
    rows = (await preparedQuery(db, name, text, [owner, now + leaseMs, now, limit, ...(delayed ? [firstDue] : [])])).rows;
  } else {
    // A statement prepared once (Knex would build and prepare it per call), run by the dispatcher's SQLite runner.
    const params = { owner, leaseEnd: now + leaseMs, now, limit, ...(delayed ? { firstDue } : {}) };
    [rows] = (await sqlite([{ sql: delayed ? CLAIM_SQLITE_DELAYED : CLAIM_SQLITE, params, mode: 'all' }], false)) as any[][];
  }
  const claimed: Claimed[] = [];
  for (const r of rows) {
    if (r.body == null || r.url == null) continue;
    claimed.push({ id: Number(r.id), guid: r.guid, event: r.event, attempts: Number(r.attempts), hookId: Number(r.webhook_id), body: bytes(r.body), url: r.url, secret: r.secret });
  }
  return claimed;
}

/** The body as a Buffer: Postgres gives text; SQLite bytes (a plain Uint8Array when they come from the SQLite thread). */
function bytes(body: string | Uint8Array): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** Due: pending and next attempt reached; with a first delay, for a first attempt also that delay passed. */
const due = (now: string, firstDue?: string) =>
  `status = 'pending' AND next_attempt_at <= ${now}` + (firstDue ? ` AND (attempts > 0 OR next_attempt_at <= ${firstDue})` : '');

const claimPostgres = (firstDue?: string) => `
  WITH due AS (
    SELECT id FROM deliveries WHERE ${due('$3', firstDue)}
     ORDER BY next_attempt_at LIMIT $4
       FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE deliveries AS d SET attempts = d.attempts + 1, lease_owner = $1, next_attempt_at = $2
      FROM due WHERE d.id = due.id
    RETURNING d.id, d.webhook_id, d.event_id, d.payload, d.guid, d.event, d.attempts)
  SELECT c.id, c.webhook_id, c.guid, c.event, c.attempts, COALESCE(c.payload, e.payload) AS body, w.url, w.secret
    FROM claimed AS c
    LEFT JOIN webhooks AS w ON w.id = c.webhook_id
    LEFT JOIN events AS e ON e.id = c.event_id`;
const CLAIM_POSTGRES = claimPostgres();
const CLAIM_POSTGRES_DELAYED = claimPostgres('$5');

const claimSqlite = (firstDue?: string) => `
  UPDATE deliveries SET attempts = attempts + 1, lease_owner = @owner, next_attempt_at = @leaseEnd
   WHERE id IN (SELECT id FROM deliveries WHERE ${due('@now', firstDue)} ORDER BY next_attempt_at LIMIT @limit)
  RETURNING id, webhook_id, guid, event, attempts, -- the body as BLOB: its UTF-8 bytes, ready to send
            CAST(COALESCE(payload, (SELECT e.payload FROM events AS e WHERE e.id = deliveries.event_id)) AS BLOB) AS body,
            (SELECT w.url FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS url,
            (SELECT w.secret FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS secret`;
const CLAIM_SQLITE = claimSqlite();
const CLAIM_SQLITE_DELAYED = claimSqlite('@firstDue');
