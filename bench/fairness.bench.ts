// Fairness between webhooks: do slow receivers hold up the fast ones? A real `wharf serve`
// (SQLite; Postgres too when BENCH_DATABASE_URL or TEST_DATABASE_URL names a server, in a
// database of its own) with 100 organizations of 10 webhooks each (1,000), and one
// receiver in a process of its own that answers each webhook after the delay its URL
// names: 70 % of the webhooks in 20 ms, 20 % in 300 ms, 9 % in 3 s and 1 % not before
// WEBHOOK_TIMEOUT (5 s here) has cut the attempt. 20,000 deliveries (20 per webhook) fall
// due at one moment, interleaved as events of many organizations arrive, and:
//  1. fairness_deliveries_per_second_<dialect>: deliveries per second from that moment to
//     the last result written, beside `slot_bound_per_second`, what WEBHOOK_CONCURRENCY
//     slots could do at best against these delays;
//  2. fairness_fast_wait_p50/p99_<dialect>: for the webhooks answered in 20 ms, the time
//     from a delivery's due time (its next_attempt_at when raised) to its attempt's start
//     (delivery_attempts.started_at). Target: p99 ≤ 250 ms under the mix. With 20,000
//     due at once and 64 slots even the all-fast baseline waits seconds for its last
//     deliveries (its line's `baseline_met`), so the ratio to the baseline is what tells
//     how much the slow receivers cost the fast ones.
// Each figure's baseline is the same run with every receiver answering in 20 ms (a fresh
// database, server and receiver), and each figure is the median of BENCH_RUNS (5) runs
// with its spread. BENCH_FAIRNESS_SCALE=0.1 keeps a tenth of the organizations (20
// deliveries per webhook still: each webhook's backlog is what the figure is about).
// WEBHOOK_RETRY_SCHEDULE is one attempt, so every delivery has its result within the run;
// a run stops by itself after PASS_CAP_MS, finished or not (then `complete: false`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { connect, isPostgres } from '../src/db/connect.ts';
import { recordEvents } from '../src/events/outbox.ts';
import { useWebhookFanOut } from '../test/helpers/fanOut.ts';
import type { NewEvent } from '../src/events/types.ts';
import type { Bench, Figure } from './run.ts';
import { child, freshDatabase, median, percentile, RUNS, serveWharf, spread, type Child, type WharfChild } from './fixtures.ts';

const SCALE = Math.min(1, Math.max(0.01, Number(process.env.BENCH_FAIRNESS_SCALE ?? 1) || 1));
const ORGS = Math.max(1, Math.round(100 * SCALE));
const HOOKS_PER_ORG = 10;
const PER_HOOK = 20;
const FAST_MS = 20;
const TIMEOUT_MS = 5000;
/** What a receiver that answers "not before WEBHOOK_TIMEOUT" waits: longer than Wharf does, and still bounded. */
const HANG_MS = TIMEOUT_MS + 5000;
/** The delay mix, rarest first: share of the webhooks and the receiver's delay. The rest answer in FAST_MS. */
const MIX: { share: number; delayMs: number }[] = [
  { share: 0.01, delayMs: HANG_MS },
  { share: 0.09, delayMs: 3000 },
  { share: 0.2, delayMs: 300 },
];
const P99_TARGET_MS = 250;
/** WEBHOOK_CONCURRENCY's default, which the bench leaves as it is. */
const CONCURRENCY = 64;
/**
 * From the update that makes every delivery due to the moment they are due: longer than
 * the dispatcher's idle poll (2 s, src/delivery/runtime/dispatcher.ts), so a server in another
 * process has seen the due time before it comes (SQLite cannot wake it).
 */
const LEAD_MS = 4000;
/** A pass (one server working through its deliveries) stops by then, finished or not. */
const PASS_CAP_MS = 240_000;
/** Far in the future: deliveries parked there while they are written. */
const FAR = 8_000_000_000_000;
/** Setup requests in flight at once (organizations, webhooks). */
const SETUP_PARALLEL = 8;
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;

type Dialect = 'sqlite' | 'postgres';

// The receiver, in a process of its own: answers a POST to /d/<ms>/<n> with 200 after <ms>
// (at most a minute), or never, when the client has hung up before. GET answers the count.
const RECEIVER = `
import http from 'node:http';
let requests = 0, cut = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') { res.end(JSON.stringify({ requests, cut })); return; }
  const delay = Math.min(60000, Number(/^\\/d\\/(\\d+)\\//.exec(req.url)?.[1] ?? 0));
  req.resume();
  req.on('end', () => {
    requests++;
    const timer = setTimeout(() => res.end('ok'), delay);
    res.on('close', () => { if (!res.writableEnded) cut++; clearTimeout(timer); });
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

/** Starts the delaying receiver; `url` is its origin. */
async function startDelayReceiver(): Promise<Child & { url: string }> {
  const rx = await child(process.execPath, ['--input-type=module', '-e', RECEIVER], process.env, /port \d+/);
  return { ...rx, url: `http://127.0.0.1:${/port (\d+)/.exec(rx.out())![1]}` };
}

/**
 * The receiver's delay for each of `w` webhooks: each class of MIX gets its share (rounded,
 * at least one webhook for the rarest, so a small scale keeps a receiver that times out),
 * spread evenly over the webhooks so no organization holds all the slow ones.
 */
function delays(w: number): number[] {
  const out: number[] = Array(w).fill(FAST_MS);
  for (const [k, { share, delayMs }] of MIX.entries()) {
    const n = k === 0 ? Math.max(1, Math.round(w * share)) : Math.round(w * share);
    for (let j = 0; j < n; j++) {
      let i = Math.floor(((j + 0.5) * w) / n);
      // Bounded: fewer slow webhooks than webhooks, so a free place is always found.
      for (let tries = 0; out[i] !== FAST_MS && tries < w; tries++) i = (i + 1) % w;
      out[i] = delayMs;
    }
  }
  return out;
}

/** Runs `jobs` with at most SETUP_PARALLEL at once. */
async function inParallel<T>(items: T[], job: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: SETUP_PARALLEL }, async () => {
      while (next < items.length) await job(items[next++]);
    }),
  );
}

/** A webhook made for the run: its id, its organization's id and its receiver's delay. */
interface Hook {
  id: number;
  orgId: number;
  delayMs: number;
}

/**
 * The organizations and their webhooks through the API, each webhook created inactive (an
 * active one is pinged at once, and the pings would be timed too), then all made active in
 * one statement, as delivery.bench.ts does. `everyFast`: every receiver answers in FAST_MS.
 */
async function setUp(wharf: WharfChild, db: Knex, rxUrl: string, everyFast: boolean): Promise<Hook[]> {
  const orgNames = Array.from({ length: ORGS }, (_, o) => `org${o}`);
  await inParallel(orgNames, (name) => wharf.api('POST', '/api/v1/orgs', { name }));
  const mix = delays(ORGS * HOOKS_PER_ORG).map((d) => (everyFast ? FAST_MS : d));
  const hooks: Hook[] = [];
  await inParallel(
    mix.map((delayMs, i) => ({ delayMs, i })),
    async ({ delayMs, i }) => {
      const org = orgNames[Math.floor(i / HOOKS_PER_ORG)];
      const url = `${rxUrl}/d/${delayMs}/${i}`;
      await wharf.api('POST', `/api/v1/orgs/${org}/webhooks`, { url, events: ['repository'], active: false });
    },
  );
  await db('webhooks').update({ active: true });
  const rows = await db('webhooks').select('id', 'org_id', 'url');
  for (const r of rows) hooks.push({ id: Number(r.id), orgId: Number(r.org_id), delayMs: Number(/\/d\/(\d+)\//.exec(r.url)![1]) });
  if (hooks.length !== mix.length) throw new Error(`${hooks.length} webhooks made, ${mix.length} wanted`);
  return hooks;
}

/** An organization's `repository` event, about 1 KB of payload. */
function event(orgId: number, round: number): NewEvent {
  return {
    repositoryId: null,
    orgId,
    type: 'repository',
    action: 'created',
    senderId: null,
    payload: {
      action: 'created',
      repository: { name: `app${round}`, full_name: `org${orgId}/app${round}`, visibility: 'private', default_branch: 'main' },
      organization: { id: orgId, login: `org${orgId}` },
      sender: { login: 'admin', type: 'User' },
      description: 'x'.repeat(800),
    },
  };
}

/**
 * Writes PER_HOOK events per organization, round by round over the organizations (as the
 * events of many organizations arrive), parked far in the future in the same transactions
 * (the dispatcher cannot see them early), then makes every delivery due at one moment
 * LEAD_MS from now; returns that moment.
 */
async function raise(db: Knex, orgIds: number[]): Promise<number> {
  const events: NewEvent[] = [];
  for (let round = 0; round < PER_HOOK; round++) for (const orgId of orgIds) events.push(event(orgId, round));
  for (let i = 0; i < events.length; i += 200) {
    await db.transaction(async (trx) => {
      await recordEvents(trx, events.slice(i, i + 200));
      // Only the rows just written (the others are parked already): the due index finds them.
      await trx('deliveries').where('status', 'pending').where('next_attempt_at', '<', FAR).update({ next_attempt_at: FAR });
    });
  }
  const dueAt = Date.now() + LEAD_MS;
  await db('deliveries').where('status', 'pending').update({ next_attempt_at: dueAt });
  // Postgres can wake the server at once; it then waits for the due time itself.
  if (isPostgres(db)) await db.raw('NOTIFY wharf_deliveries');
  if (Date.now() > dueAt - 2500) process.stderr.write('fairness: the due update took long; the server may have seen the due time late\n');
  return dueAt;
}

/** Waits until no delivery is pending, the server has exited or PASS_CAP_MS has passed; true when all have their result. */
async function settled(db: Knex, server: Child, dueAt: number): Promise<boolean> {
  while (Date.now() - dueAt < PASS_CAP_MS) {
    const row = await db('deliveries').where('status', 'pending').count({ n: '*' }).first();
    if (Number(row?.n) === 0) return true;
    if (server.proc.exitCode !== null) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** What one pass measured. */
interface Pass {
  deliveries: number;
  results: number;
  complete: boolean;
  rate: number;
  /** Due → attempt started, ms, of the fast webhooks' deliveries (a delivery never started counts as the pass's whole length). */
  fastWaits: number[];
  /** p50/p99 of due → started by receiver delay. */
  waitsByDelay: Record<string, { p50: number; p99: number; n: number }>;
  succeeded: number;
  failed: number;
  slotBound: number;
  seconds: number;
}

/** Reads the pass's results from the database. */
async function measure(db: Knex, hooks: Hook[], dueAt: number, complete: boolean, stoppedAt: number): Promise<Pass> {
  const delayOf = new Map(hooks.map((h) => [h.id, h.delayMs]));
  const rows = (await db('deliveries as d')
    .leftJoin('delivery_attempts as a', (j) => j.on('a.delivery_id', 'd.id').andOn('a.attempt', db.raw('1')))
    .select('d.webhook_id', 'd.status', 'd.finished_at', 'a.started_at')) as {
    webhook_id: number;
    status: string;
    finished_at: number | null;
    started_at: number | null;
  }[];
  const waits = new Map<number, number[]>();
  let results = 0;
  let succeeded = 0;
  let failed = 0;
  let last = dueAt;
  for (const r of rows) {
    const delay = delayOf.get(Number(r.webhook_id))!;
    const wait = r.started_at === null ? stoppedAt - dueAt : Number(r.started_at) - dueAt;
    if (!waits.has(delay)) waits.set(delay, []);
    waits.get(delay)!.push(wait);
    if (r.status !== 'pending') results++;
    if (r.status === 'success') succeeded++;
    if (r.status === 'failed') failed++;
    if (r.finished_at !== null) last = Math.max(last, Number(r.finished_at));
  }
  const waitsByDelay: Pass['waitsByDelay'] = {};
  for (const [delay, ws] of [...waits].sort((a, b) => a[0] - b[0]))
    waitsByDelay[delay === HANG_MS ? 'timeout' : `${delay}ms`] = { p50: percentile(ws, 50), p99: percentile(ws, 99), n: ws.length };
  // At best, CONCURRENCY slots each held for the receiver's delay (WEBHOOK_TIMEOUT for those that hang).
  const slotSeconds = hooks.reduce((s, h) => s + (PER_HOOK * Math.min(h.delayMs, TIMEOUT_MS)) / 1000, 0);
  const seconds = (last - dueAt) / 1000;
  return {
    deliveries: rows.length,
    results,
    complete,
    rate: results / Math.max(0.001, seconds),
    fastWaits: waits.get(FAST_MS) ?? [],
    waitsByDelay,
    succeeded,
    failed,
    slotBound: rows.length / (slotSeconds / CONCURRENCY),
    seconds,
  };
}

/** One pass on a fresh database, server and receiver: set up, raise, wait, measure. */
async function pass(dir: string, dialect: Dialect, everyFast: boolean): Promise<Pass> {
  fs.mkdirSync(dir, { recursive: true });
  const database = await freshDatabase(dir, dialect === 'postgres' ? postgresServer : undefined, 'wharf_bench_fairness');
  const rx = await startDelayReceiver();
  // One attempt per delivery (every delivery has its result within the pass); the health
  // pause after WEBHOOK_PAUSE_AFTER (20) failures in a row comes after a timing-out
  // webhook's last delivery, so it holds back nothing.
  const wharf = await serveWharf(dir, database.url, {
    WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
    WEBHOOK_RETRY_SCHEDULE: '0s',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
  });
  const db = connect(database.url);
  // Wharf serves as a child process: this one records the events itself, through the fan-out the server would use.
  useWebhookFanOut();
  try {
    const hooks = await setUp(wharf, db, rx.url, everyFast);
    const dueAt = await raise(
      db,
      [...new Set(hooks.map((h) => h.orgId))].sort((a, b) => a - b),
    );
    const complete = await settled(db, wharf, dueAt);
    return await measure(db, hooks, dueAt, complete, Date.now());
  } catch (err) {
    throw new Error(`fairness ${dialect} pass: ${(err as Error).message}\nwharf serve logged:\n${wharf.out().slice(-4000)}`, { cause: err });
  } finally {
    await db.destroy();
    wharf.proc.kill('SIGKILL');
    rx.proc.kill('SIGKILL');
    await Promise.all([wharf.exited, rx.exited]);
    await database.drop();
  }
}

/** One run: the all-fast baseline, then the mix. */
interface Run {
  fast: Pass;
  mix: Pass;
}

/** The figures of one dialect from its runs: each the median of the runs, its baseline the median of the all-fast passes. */
function figures(dialect: Dialect, runs: Run[]): Figure[] {
  const scale = { scale: SCALE, organizations: ORGS, webhooks: ORGS * HOOKS_PER_ORG, deliveries: runs[0].mix.deliveries, concurrency: CONCURRENCY };
  const rates = runs.map((r) => r.mix.rate);
  const baseRates = runs.map((r) => r.fast.rate);
  const m = runs.find((r) => r.mix.rate === median(rates))!;
  const complete = runs.every((r) => r.mix.complete && r.fast.complete);
  const wait = (which: 'p50' | 'p99'): Figure => {
    const p = which === 'p50' ? 50 : 99;
    const values = runs.map((r) => percentile(r.mix.fastWaits, p));
    const baselines = runs.map((r) => percentile(r.fast.fastWaits, p));
    const value = median(values);
    const baseline = median(baselines);
    return {
      figure: `fairness_fast_wait_${which}_${dialect}`,
      value,
      unit: 'ms',
      baseline,
      ratio: Number((value / Math.max(1, baseline)).toFixed(3)),
      target: `≤ ${P99_TARGET_MS} ms under the delay mix${which === 'p50' ? ' (the p99 target, which bounds the p50 too)' : ''}`,
      met: value <= P99_TARGET_MS && complete,
      baseline_met: baseline <= P99_TARGET_MS,
      ...spread(values),
      baseline_runs: baselines,
      ...scale,
      fast_deliveries: m.mix.fastWaits.length,
      waits_by_delay_ms: m.mix.waitsByDelay,
      baseline_waits_by_delay_ms: m.fast.waitsByDelay,
      complete,
      note: `ms from a delivery's due time (next_attempt_at when raised, the same for all) to its attempt's start (delivery_attempts.started_at), over the deliveries of the webhooks answered in ${FAST_MS} ms; baseline: every receiver answers in ${FAST_MS} ms; median of ${RUNS} runs`,
    };
  };
  return [
    {
      figure: `fairness_deliveries_per_second_${dialect}`,
      value: Math.round(median(rates)),
      unit: 'deliveries/s',
      baseline: Math.round(median(baseRates)),
      ratio: Number((median(rates) / median(baseRates)).toFixed(3)),
      target: `every delivery has its result within ${PASS_CAP_MS / 1000} s (throughput reported beside the all-fast baseline and the slot bound)`,
      met: complete,
      ...spread(rates),
      baseline_runs: baseRates.map(Math.round),
      slot_bound_per_second: Math.round(m.mix.slotBound),
      seconds: Number(m.mix.seconds.toFixed(1)),
      baseline_seconds: Number(m.fast.seconds.toFixed(1)),
      succeeded: m.mix.succeeded,
      failed: m.mix.failed,
      results: runs.map((r) => r.mix.results),
      ...scale,
      mix: `${MIX.map((c) => `${c.share * 100}% ${c.delayMs === HANG_MS ? 'until WEBHOOK_TIMEOUT' : `${c.delayMs} ms`}`).join(', ')}, the rest ${FAST_MS} ms`,
      webhook_timeout_ms: TIMEOUT_MS,
      complete,
      note: `deliveries per second from their common due time to the last result written; slot_bound_per_second: deliveries / (sum of receiver delays / ${CONCURRENCY} slots); median of ${RUNS} runs, each a fresh database, server and receiver`,
    },
    wait('p50'),
    wait('p99'),
  ];
}

const bench: Bench = async (report) => {
  const dialects: Dialect[] = postgresServer ? ['sqlite', 'postgres'] : ['sqlite'];
  for (const dialect of dialects) {
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-fairness-'));
      try {
        const fast = await pass(path.join(dir, 'fast'), dialect, true);
        const mix = await pass(path.join(dir, 'mix'), dialect, false);
        runs.push({ fast, mix });
        process.stderr.write(
          `fairness ${dialect} run ${i + 1}/${RUNS}: ${Math.round(mix.rate)} deliveries/s (all fast ${Math.round(fast.rate)}), fast p99 ${percentile(mix.fastWaits, 99)} ms (all fast ${percentile(fast.fastWaits, 99)} ms)\n`,
        );
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    for (const f of figures(dialect, runs)) report(f);
  }
};

export default bench;
