import type { Db } from '../../db/connect.ts';
import { isPostgres } from '../../db/connect.ts';
import type { DbInt } from '../../db/rows.ts';
import { preparedQuery } from './postgres.ts';
import { mainConnectionRunner, type SqliteRunner } from './sqlite.ts';
import { DEFAULT_HOLD_MS, type Shares } from './shares.ts';

/**
 * A claimed delivery with what its attempt needs: the number this attempt carries (one
 * more than the attempts recorded so far), the claim's token, and the body (the
 * delivery's own bytes for pings, else its event's) and the webhook's current URL,
 * secret, header style and custom headers (read by the claim statement itself, so they cost no query).
 */
export interface Claimed {
  id: number;
  guid: string;
  event: string;
  /** The attempt this claim makes: attempts recorded so far + 1. */
  attempt: number;
  /** Claims since the delivery's last recorded result, this one included; the result write checks it. */
  claims: number;
  /** Claims of this delivery that died with their node while the attempt may have been in flight (see claimDue). */
  interruptions: number;
  hookId: number;
  /** The webhook's organization (its own, or its repository's): the dispatcher shares its places by it first. */
  org: number;
  /** The webhook's max_concurrency, or null. */
  maxConcurrency: number | null;
  /** The exact bytes to send. */
  body: Buffer;
  url: string;
  secret: string;
  /** True for a webhook of `header_style: "github"`: GitHub's header names are sent beside Wharf's. */
  github: boolean;
  /** The webhook's custom headers, sealed (opened by openCustomHeaders, once per stored value); null when it has none. */
  headers: string | null;
  /** When this claim was made (the webhook's state below is as of then). */
  claimedAt: number;
  /**
   * The webhook's health and pacing as the claim read them, or null when there is nothing
   * to heed (healthy, no failure in a row, no Retry-After, no max_rate): the common case
   * costs the gate and the health accounting nothing.
   */
  health: ClaimHealth | null;
}

/** What the claim read of its webhook's health and pacing (SPEC §5.2 max_rate, §5.5). */
export interface ClaimHealth {
  state: 'healthy' | 'paused' | 'disabled';
  /** Failed attempts in a row so far. */
  failing: number;
  /** The one delivery a paused webhook may send (its probe), or null. */
  probe: number | null;
  /** No attempt before this time (a Retry-After), or null. */
  notBefore: number | null;
  maxRate: number | null;
}

/** A row of the claim statement, as either driver gives it. */
interface ClaimRow {
  id: DbInt;
  webhook_id: number;
  guid: string;
  event: string;
  attempts: number;
  claims: number;
  interruptions: number;
  org: number;
  cap: number | null;
  /** Text from Postgres, bytes from SQLite; null when the event is gone. */
  body: string | Uint8Array | null;
  /** Null, as the secret, when the webhook is gone. */
  url: string | null;
  secret: string | null;
  header_style: string | null;
  headers: string | null;
  /** JSON (ClaimHealth's fields as stored), null when the webhook has nothing to heed. */
  health: string | null;
}

/**
 * Claims up to `limit` due deliveries for this process in ONE statement, which also
 * returns what their attempts need: a lease is taken (lease_owner, and next_attempt_at
 * moved to the lease's end) and `claims` raised. The attempt is NOT counted here: it is
 * counted by the result write (complete.ts), which records it.
 *
 * A crash between this claim and the result write: the row stays `pending`, its
 * next_attempt_at at the lease's end, so it falls due again by itself and another claim
 * (this process after a restart, or any other) makes the same attempt again, with the
 * same number and guid. An attempt in flight is so repeated (at-least-once; receivers
 * dedupe on the guid), a delivery claimed ahead and never started is simply sent later,
 * and no attempt is ever skipped.
 *
 * Interruptions: a claim that finds `claims` above 0 takes over a claim that died
 * without a result, and counts it in `interruptions` (in this same statement) when its
 * attempt was, or may have been, in flight: the first claim after a result is not
 * marked (marking every attempt would put a write before every request), so its death
 * counts; later claims of an interrupted delivery mark their attempt started
 * (`in_flight`, markInFlight.ts) before sending, so a delivery that was merely claimed
 * ahead when its node died again is not counted again. Interruptions count within one
 * attempt: the result write sets them back to 0 (complete.ts). A claim returning
 * PARK_AFTER or more interruptions parks the delivery instead of sending it (attempt.ts).
 * Postgres: FOR UPDATE SKIP LOCKED lets several processes claim side by side, never the
 * same row. SQLite: writers are serialized, so one UPDATE … RETURNING is atomic.
 * `firstDelayMs` is the schedule's delay before attempt 1, counted from creation.
 * A delivery whose webhook or event is gone (their rows take it with them) comes back
 * without a body or URL and is left out: there is nothing to send.
 */
export async function claimDue(
  db: Db,
  options: {
    owner: string;
    limit: number;
    now: number;
    leaseMs: number;
    firstDelayMs: number;
    idle?: boolean;
    /** The time each webhook and organization was served here (the dispatcher's ledger); none: all alike. */
    shares?: Shares;
    sqlite?: SqliteRunner;
  },
): Promise<Claimed[]> {
  const { owner, limit, now, leaseMs, firstDelayMs, idle = false, shares, sqlite = mainConnectionRunner(db) } = options;
  const hooks = JSON.stringify(shares?.hooks.map((h) => [h.hook, h.servedMs, h.holdMs]) ?? []);
  const orgs = JSON.stringify(shares?.orgs.map((o) => [o.org, o.servedMs]) ?? []);
  // The first-delay condition only when there is a first delay: without it, the due index alone answers.
  const delayed = firstDelayMs > 0;
  const firstDue = now - firstDelayMs;
  let rows: ClaimRow[];
  if (isPostgres(db)) {
    const [name, text] = delayed ? ['wharf_claim_due_delayed', CLAIM_POSTGRES_DELAYED] : ['wharf_claim_due', CLAIM_POSTGRES];
    rows = (await preparedQuery<ClaimRow>(db, name, text, [owner, now + leaseMs, now, limit, idle, hooks, orgs, ...(delayed ? [firstDue] : [])])).rows;
  } else {
    // A statement prepared once (Knex would build and prepare it per call), run by the dispatcher's SQLite runner.
    // The shares go to this connection's own temporary tables first: keyed, the claim looks them up by index.
    const params = { owner, leaseEnd: now + leaseMs, now, limit, idle: idle ? 1 : 0, ...(delayed ? { firstDue } : {}) };
    const shares = SHARES_SQLITE.map((sql) => ({
      sql,
      params: sql.includes('@hooks') ? { hooks } : sql.includes('@orgs') ? { orgs } : [],
      mode: 'run' as const,
    }));
    const results = await sqlite([...shares, { sql: delayed ? CLAIM_SQLITE_DELAYED : CLAIM_SQLITE, params, mode: 'all' }], false);
    rows = results.at(-1) as ClaimRow[];
  }
  const claimed: Claimed[] = [];
  // In order of creation (an UPDATE returns its rows in no set order): the local queue starts a webhook's deliveries in the order it is given them.
  rows.sort((x, y) => Number(x.id) - Number(y.id));
  for (const r of rows) {
    if (r.body == null || r.url == null) continue;
    claimed.push({
      id: Number(r.id),
      guid: r.guid,
      event: r.event,
      attempt: Number(r.attempts) + 1,
      claims: Number(r.claims),
      interruptions: Number(r.interruptions),
      hookId: Number(r.webhook_id),
      org: Number(r.org),
      maxConcurrency: r.cap == null ? null : Number(r.cap),
      body: bytes(r.body),
      url: r.url,
      secret: r.secret!, // there with the URL
      github: r.header_style === 'github',
      headers: r.headers ?? null,
      claimedAt: now,
      health: r.health == null ? null : parseHealth(r.health),
    });
  }
  return claimed;
}

/** The body as a Buffer: Postgres gives text; SQLite bytes (a plain Uint8Array when they come from the SQLite thread). */
function bytes(body: string | Uint8Array): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** The claim's health column read. */
function parseHealth(text: string): ClaimHealth {
  const h = JSON.parse(text) as { state: string; failing: unknown; probe: unknown; not_before: unknown; max_rate: unknown };
  const num = (v: unknown) => (v == null ? null : Number(v));
  return {
    state: h.state === 'paused' || h.state === 'disabled' ? h.state : 'healthy',
    failing: Number(h.failing ?? 0),
    probe: num(h.probe),
    notBefore: num(h.not_before),
    maxRate: num(h.max_rate),
  };
}

/**
 * The webhook's health and pacing for the claim, as JSON, or NULL when there is nothing
 * to heed. `json` builds an object (json_build_object on Postgres, json_object on SQLite).
 */
const healthColumn = (w: string, json: string) => `CASE WHEN ${w}.health_state = 'healthy' AND ${w}.failing_attempts = 0 AND ${w}.not_before IS NULL
       AND ${w}.max_rate IS NULL THEN NULL
  ELSE ${json}('state', ${w}.health_state, 'failing', ${w}.failing_attempts, 'probe', ${w}.probe_delivery_id,
               'not_before', ${w}.not_before, 'max_rate', ${w}.max_rate) END`;

/** A delivery whose node died this many times during its attempts is parked: failed, never claimed again by itself. */
export const PARK_AFTER = 3;

/**
 * The SET part shared by both dialects: a claim taking over one that died (claims > 0)
 * counts an interruption if that claim was the first after a result (not marked, so
 * possibly in flight) or marked its attempt started. Old values on the right: SQL
 * evaluates every SET expression on the row as it was.
 */
const TAKE = `claims = claims + 1, in_flight = false,
  interruptions = interruptions + CASE WHEN claims = 1 OR (claims > 1 AND in_flight) THEN 1 ELSE 0 END`;

/** Due: pending and next attempt reached; with a first delay, for a first attempt never claimed also that delay passed. */
const due = (now: string, firstDue?: string, d = 'deliveries') =>
  `${d}.status = 'pending' AND ${d}.next_attempt_at <= ${now}` +
  (firstDue ? ` AND (${d}.attempts > 0 OR ${d}.claims > 0 OR ${d}.next_attempt_at <= ${firstDue})` : '');

/** A webhook's organization: its own, or its repository's. */
const ORG = `COALESCE(w.org_id, (SELECT r.org_id FROM repositories AS r WHERE r.id = w.repository_id))`;

/**
 * The fair choice of due deliveries, as common table expressions ending in `picked`
 * (id, org, max_concurrency and the keys it is taken in), shared by both dialects:
 *
 * - svc, osvc: what this process's ledger says (serviceLedger.ts, given as JSON): each
 *   webhook's time served and the expected hold of its attempt, each organization's time
 *   served; a webhook it has not timed is expected to hold DEFAULT_HOLD_MS and was
 *   served nothing;
 * - hooks: the webhooks with due work, found by a skip scan of deliveries_due_by_webhook
 *   (one index probe per webhook, however long its backlog);
 * - leases: the leases held now (claimed, lease not run out), per webhook, from the
 *   shared table: on Postgres every node's count;
 * - cand: each webhook's oldest due deliveries (no more than a claim takes), with `wr` =
 *   its leases + its place in line, and `hv` = the time it would have been served when
 *   it starts: its time served + an expected hold for every lease and delivery before it;
 * - ranked: `ov`, the same for its organization: the organization's time served + the
 *   expected hold of its leases + of its deliveries ranked before this one by `hv`.
 *
 * Taken in order of ov, then hv (start-time fair queuing, charged by the time a place
 * is held): the organization served the least takes the next place, and within it the
 * webhook served the least, so a receiver answering in 20 ms gets many turns for
 * another's one 3 s attempt, and an attempt in flight counts for as long as its lease
 * runs. Alone, a webhook takes every place (nothing else ranks before it). A webhook's
 * `max_concurrency` leaves out whatever would rank past it. `idle` (a parameter) keeps
 * only organizations that hold no lease: the claim a new event makes when the places
 * here are full.
 *
 * Across nodes a capped webhook never exceeds its cap: every claim ranks a capped
 * webhook's due deliveries in the same order (`wr`, by next_attempt_at and id, whatever
 * the ledger says) and may take only the first (cap - leases) of them; two claims at
 * once contend for the same rows (Postgres locks them, skipping the locked; a row
 * claimed meanwhile is no longer due when re-checked), never for rows further down.
 */
const fairChoice = (p: {
  now: string;
  limit: string;
  idle: string;
  firstDue?: string;
  /** Rows (hook, served, hold) and (org, served): the ledger's shares. */
  hookShares: string;
  orgShares: string;
  /** How their CTEs are taken: MATERIALIZED (parsed once), or inlined (a table with its key). */
  sharesAs: string;
  /** How many due deliveries of each webhook are ranked, given how many webhooks have due work. */
  perHookCount: (hooks: string) => string;
  perHook: (hook: string) => string;
  /** The index a scan must use (SQLite's INDEXED BY; Postgres plans it alone). */
  indexed: (index: string) => string;
  /** An inner join taken in the order written (SQLite's CROSS JOIN: the webhooks with due work first, not every webhook). */
  join: string;
}) => `
  svc(hook, served, hold) AS ${p.sharesAs} (${p.hookShares}),
  osvc(org, served) AS ${p.sharesAs} (${p.orgShares}),
  hooks(id) AS (
    SELECT (SELECT webhook_id FROM deliveries ${p.indexed('deliveries_due_by_webhook')} WHERE ${due(p.now)} ORDER BY webhook_id LIMIT 1)
    UNION ALL
    SELECT (SELECT webhook_id FROM deliveries ${p.indexed('deliveries_due_by_webhook')}
             WHERE ${due(p.now)} AND webhook_id > hooks.id ORDER BY webhook_id LIMIT 1)
      FROM hooks WHERE hooks.id IS NOT NULL),
  per(n) AS (SELECT ${p.perHookCount('count(hooks.id)')} FROM hooks),
  leases AS (
    SELECT webhook_id, count(*) AS n FROM deliveries ${p.indexed('deliveries_leased')}
     WHERE status = 'pending' AND lease_owner IS NOT NULL AND next_attempt_at > ${p.now} GROUP BY webhook_id),
  org_leases AS (
    SELECT ${ORG} AS org, sum(l.n) AS n, sum(l.n * COALESCE(s.hold, ${DEFAULT_HOLD_MS})) AS t
      FROM leases AS l JOIN webhooks AS w ON w.id = l.webhook_id LEFT JOIN svc AS s ON s.hook = l.webhook_id GROUP BY 1),
  cand AS (
    SELECT d.id, d.next_attempt_at, h.id AS hook, h.org, h.cap,
           COALESCE(h.held, 0) + row_number() OVER (PARTITION BY h.id ORDER BY d.next_attempt_at, d.id) AS wr
      FROM (SELECT w.id, ${ORG} AS org, w.max_concurrency AS cap, l.n AS held
              FROM hooks ${p.join} webhooks AS w ON w.id = hooks.id LEFT JOIN leases AS l ON l.webhook_id = hooks.id) AS h
      ${p.perHook('h.id')}),
  ranked AS (
    SELECT c.id, c.org, c.cap, c.hv, c.next_attempt_at, COALESCE(o.n, 0) AS org_held,
           COALESCE(os.served, 0) + COALESCE(o.t, 0) - c.hold
             + sum(c.hold) OVER (PARTITION BY c.org ORDER BY c.hv, c.next_attempt_at, c.id ROWS UNBOUNDED PRECEDING) AS ov
      FROM (SELECT cand.*, COALESCE(s.hold, ${DEFAULT_HOLD_MS}) AS hold,
                   COALESCE(s.served, 0) + (cand.wr - 1) * COALESCE(s.hold, ${DEFAULT_HOLD_MS}) AS hv
              FROM cand LEFT JOIN svc AS s ON s.hook = cand.hook) AS c
      LEFT JOIN org_leases AS o ON o.org = c.org LEFT JOIN osvc AS os ON os.org = c.org
     WHERE c.cap IS NULL OR c.wr <= c.cap),
  picked AS (
    SELECT id, org, cap, ov, hv, next_attempt_at FROM ranked
     WHERE NOT ${p.idle} OR org_held = 0
     ORDER BY ov, hv, next_attempt_at, id LIMIT ${p.limit})`;

/**
 * Each webhook's due deliveries ranked per claim: twice the claim's share of each (so a
 * claim still fills when some webhooks rank low), at least PER_HOOK_MIN, at most the
 * whole claim. A webhook alone so ranks as many as the claim takes; among 1,000 with
 * due work, 4 each rather than 128 (20,000 rows windowed per claim cost SQLite 33 ms).
 * A webhook's first ones in its order are the ones ranked, so a cap still holds.
 */
const RANKED_PER_PLACE = 2;
const PER_HOOK_MIN = 4;

/** The order the picked are claimed in. */
const FAIR_ORDER = 'p.ov, p.hv, p.next_attempt_at, p.id';

/**
 * Postgres: the picked deliveries are locked one by one through the primary key, and
 * checked due again as each is locked (a claim that committed meanwhile moved it past
 * now). The check is written `(…) IS TRUE`, which no index answers: a plan made while the
 * table was small (store/postgres.ts) otherwise looked each picked row up through a due
 * index, walking every due row once per row locked (7-25 ms a claim of 32 with 2,000-4,000
 * due, against 1-2 ms by key; test/delivery/dispatchPlans.test.ts shows the plan).
 */
const claimPostgres = (firstDue?: string) => `
  WITH RECURSIVE ${fairChoice({
    now: '$3',
    limit: '$4 * 2',
    idle: '$5',
    firstDue,
    perHookCount: (n) => `LEAST($4, GREATEST(${PER_HOOK_MIN}, CEIL(${RANKED_PER_PLACE} * $4::float8 / GREATEST(${n}, 1))))::int`,
    sharesAs: 'MATERIALIZED',
    hookShares: `SELECT (e->>0)::bigint, (e->>1)::float8, (e->>2)::float8 FROM json_array_elements($6::json) AS e`,
    orgShares: `SELECT (e->>0)::bigint, (e->>1)::float8 FROM json_array_elements($7::json) AS e`,
    indexed: () => '',
    join: 'JOIN',
    perHook: (hook) => `CROSS JOIN LATERAL (
        SELECT id, next_attempt_at FROM deliveries WHERE webhook_id = ${hook} AND ${due('$3', firstDue)}
         ORDER BY next_attempt_at LIMIT (SELECT n FROM per)) AS d`,
  })},
  due AS (
    SELECT d.id, p.org, p.cap FROM deliveries AS d JOIN picked AS p ON p.id = d.id
     WHERE (${due('$3', firstDue, 'd')}) IS TRUE
     ORDER BY ${FAIR_ORDER} LIMIT $4
       FOR UPDATE OF d SKIP LOCKED),
  claimed AS (
    UPDATE deliveries SET ${TAKE}, lease_owner = $1, next_attempt_at = $2
      FROM due WHERE deliveries.id = due.id
    RETURNING deliveries.id, deliveries.webhook_id, deliveries.event_id, deliveries.payload, deliveries.guid, deliveries.event,
              deliveries.attempts, deliveries.claims, deliveries.interruptions, due.org, due.cap)
  SELECT c.id, c.webhook_id, c.guid, c.event, c.attempts, c.claims, c.interruptions, c.org, c.cap,
         COALESCE(c.payload, e.payload) AS body, w.url, w.secret, w.header_style, w.headers,
         ${healthColumn('w', 'json_build_object')}::text AS health
    FROM claimed AS c
    LEFT JOIN webhooks AS w ON w.id = c.webhook_id
    LEFT JOIN events AS e ON e.id = c.event_id`;
const CLAIM_POSTGRES = claimPostgres();
const CLAIM_POSTGRES_DELAYED = claimPostgres('$8');

const claimSqlite = (firstDue?: string) => `
  WITH RECURSIVE ${fairChoice({
    now: '@now',
    limit: '@limit',
    idle: '@idle',
    firstDue,
    // Integer arithmetic: the driver binds numbers as REAL, and a LIMIT must be a whole number.
    perHookCount: (n) =>
      `min(CAST(@limit AS INTEGER), max(${PER_HOOK_MIN}, (${RANKED_PER_PLACE} * CAST(@limit AS INTEGER) + max(${n}, 1) - 1) / max(${n}, 1)))`,
    sharesAs: '',
    hookShares: 'SELECT hook, served, hold FROM temp.claim_hook_shares',
    orgShares: 'SELECT org, served FROM temp.claim_org_shares',
    indexed: (index) => `INDEXED BY ${index}`,
    join: 'CROSS JOIN',
    perHook: (hook) => `CROSS JOIN deliveries AS d ON d.id IN (
        SELECT x.id FROM deliveries AS x WHERE x.webhook_id = ${hook} AND ${due('@now', firstDue, 'x')}
         ORDER BY x.next_attempt_at LIMIT (SELECT n FROM per))`,
  })}
  UPDATE deliveries SET ${TAKE}, lease_owner = @owner, next_attempt_at = @leaseEnd
   WHERE id IN (SELECT p.id FROM picked AS p)
  RETURNING id, webhook_id, guid, event, attempts, claims, interruptions, -- the body as BLOB: its UTF-8 bytes, ready to send
            CAST(COALESCE(payload, (SELECT e.payload FROM events AS e WHERE e.id = deliveries.event_id)) AS BLOB) AS body,
            (SELECT ${ORG} FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS org,
            (SELECT w.max_concurrency FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS cap,
            (SELECT w.url FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS url,
            (SELECT w.secret FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS secret,
            (SELECT w.header_style FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS header_style,
            (SELECT w.headers FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS headers,
            (SELECT ${healthColumn('w', 'json_object')} FROM webhooks AS w WHERE w.id = deliveries.webhook_id) AS health`;
const CLAIM_SQLITE = claimSqlite();

/** Fills the SQLite claim's temporary tables of shares from the ledger's JSON (the tables are this connection's alone). */
const SHARES_SQLITE = [
  'CREATE TEMP TABLE IF NOT EXISTS claim_hook_shares (hook INTEGER PRIMARY KEY, served REAL NOT NULL, hold REAL NOT NULL)',
  'CREATE TEMP TABLE IF NOT EXISTS claim_org_shares (org INTEGER PRIMARY KEY, served REAL NOT NULL)',
  'DELETE FROM temp.claim_hook_shares',
  'DELETE FROM temp.claim_org_shares',
  `INSERT INTO temp.claim_hook_shares SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
     FROM json_each(@hooks)`,
  `INSERT INTO temp.claim_org_shares SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@orgs)`,
];
const CLAIM_SQLITE_DELAYED = claimSqlite('@firstDue');
