// What a user feels between `git push` and their webhook, through a real `wharf serve`
// (SQLite; Postgres too when BENCH_DATABASE_URL or TEST_DATABASE_URL names a server, in a
// database of its own) and a receiver in a process of its own that reads every body,
// checks its X-Service-Signature with the secret the webhook's creation answered, and
// answers 200. Clocks run from the end of a `git push` (its process's exit) to the
// receiver having the delivery; every time is epoch ms on this one machine.
//  1. push_to_last_delivery_<dialect>: a push of BENCH_PUSH_BRANCHES (3,000) new branches,
//     each its own commit: deliveries per second until the receiver has the last distinct
//     X-Service-Delivery, as a ratio to bare undici POSTs (64 connections, 64 in flight)
//     of bodies the size of the real payloads to the same receiver, taken before and after
//     the Wharf run and averaged (after an untimed warm-up: bare POSTs get some fivefold
//     faster over their first ~15,000, and both sides then meet a warm receiver). With it the run's time split, read from the database
//     afterwards: when the events were written, their deliveries fanned out, the attempts
//     started and finished, and the last one arrived.
//  2. push_to_delivery_p50/p99_<dialect>: 20 pushes of one new commit to one branch, one
//     after another, each timed to the arrival of the delivery whose `after` is its commit.
// Each figure is the median of BENCH_RUNS (5) runs, each a fresh database, server and
// receiver; the line carries the spread and, for 1, the median run's baseline and split.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHmac } from 'node:crypto';
import { Pool } from 'undici';
import type { Knex } from 'knex';
import { connect } from '../src/db/connect.ts';
import type { Bench, Figure } from './run.ts';
import { freshDatabase, median, percentile, RUNS, serveWharf, spread, startReceiver, timedGit, type Child, type WharfChild } from './fixtures.ts';

const BRANCHES = Math.max(1, Number(process.env.BENCH_PUSH_BRANCHES ?? 3000) || 3000);
const PUSHES = 20;
/** In flight at once for the baseline: WEBHOOK_CONCURRENCY's default, Wharf's side of the comparison. */
const CONCURRENCY = 64;
/** Bare POSTs per baseline (enough to last a while at the bare rate), and untimed before the first. */
const BASELINE_POSTS = Math.max(BRANCHES, 10_000);
const WARM_UP = 20_000;
/** A wait fails when nothing arrives at the receiver for this long. */
const STALL_MS = 60_000;
/** The calibration branch: as long a name as most of the pushed ones, so its payload is their size. */
const CALIBRATION = `c${Math.ceil(BRANCHES / 2)}`;
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;

type Dialect = 'sqlite' | 'postgres';

/** The commits to push, by name: `b<i>` the branches, CALIBRATION, `main<k>` the chain of one-commit pushes. */
type Shas = Map<string, string>;

/**
 * The source repository, built by `git fast-import` in one go: BRANCHES root commits on
 * refs/heads/b1…bN, each adding one small file; one more such commit on the calibration
 * branch; and a line of PUSHES + 1 commits on main, each changing one file. Fixed times,
 * so the ids are the same every run.
 */
async function sourceRepository(dir: string): Promise<{ src: string; shas: Shas }> {
  const src = path.join(dir, 'src.git');
  const marks = path.join(dir, 'marks');
  const names: string[] = [];
  const lines: string[] = [];
  const commit = (ref: string, name: string, file: string, text: string, message: string) => {
    names.push(name);
    const t = 1_700_000_000 + names.length;
    lines.push(`commit ${ref}`, `mark :${names.length}`, `committer Ada Lovelace <ada@example.com> ${t} +0000`, `data ${Buffer.byteLength(message)}`, message);
    lines.push(`M 644 inline ${file}`, `data ${Buffer.byteLength(text)}`, text);
  };
  for (let i = 1; i <= BRANCHES; i++) commit(`refs/heads/b${i}`, `b${i}`, `b${i}.txt`, `branch ${i}\n`, `Branch ${i}\n`);
  const mid = CALIBRATION.slice(1);
  commit(`refs/heads/${CALIBRATION}`, CALIBRATION, `c${mid}.txt`, `branch ${mid}\n`, `Branch ${mid}\n`);
  for (let k = 0; k <= PUSHES; k++) commit('refs/heads/main', `main${k}`, 'f.txt', `change ${k}\n`, `Change ${k}\n`);
  await timedGit(['init', '-q', '--bare', src], dir);
  await timedGit(['fast-import', '--quiet', `--export-marks=${marks}`], src, (stdin) => stdin.end(lines.join('\n') + '\n'));
  const shas: Shas = new Map();
  for (const line of fs.readFileSync(marks, 'utf8').trim().split('\n')) {
    const [mark, sha] = line.split(' ');
    shas.set(names[Number(mark.slice(1)) - 1], sha);
  }
  return { src, shas };
}

/** One request the receiver printed. */
interface Arrival {
  at: number;
  path: string;
  event: string;
  guid: string;
  after: string;
  bytes: number;
  signatureOk: boolean;
}

/** The receiver's requests as it prints them, and a wait for one that ends a search. */
function arrivals(rx: Child, server: Child) {
  const all: Arrival[] = [];
  let listener: ((a: Arrival) => void) | undefined;
  let rest = '';
  rx.proc.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const [tag, at, p, event, guid, after, bytes, ok] = line.split(' ');
      if (tag !== 'r') continue;
      const a = { at: Number(at), path: p, event, guid, after, bytes: Number(bytes), signatureOk: ok === '1' };
      all.push(a);
      listener?.(a);
    }
  });
  /** The first request from `from` on for which `done` is true; `done` sees each request once, in order. */
  const until = (what: string, done: (a: Arrival) => boolean, from = all.length): Promise<Arrival> =>
    new Promise((resolve, reject) => {
      for (let i = from; i < all.length; i++) if (done(all[i])) return resolve(all[i]);
      let quietSince = Date.now();
      const end = () => {
        clearInterval(watch);
        listener = undefined;
      };
      const watch = setInterval(() => {
        const why = server.proc.exitCode !== null ? 'wharf serve exited' : Date.now() - quietSince > STALL_MS ? `nothing arrived for ${STALL_MS / 1000} s` : '';
        if (why) {
          end();
          reject(new Error(`${why} while waiting for ${what}`));
        }
      }, 250);
      listener = (a) => {
        quietSince = Date.now();
        if (!done(a)) return;
        end();
        resolve(a);
      };
    });
  return { all, until };
}

/** The receiver's line for a push delivery of `after`. */
const pushOf = (after: string) => (a: Arrival) => a.path === '/hook' && a.event === 'push' && a.after === after;

/** Bare undici: `n` POSTs of one signed body of `bytes` bytes through a Pool of CONCURRENCY connections, CONCURRENCY in flight; per second. */
async function bareRate(origin: string, secret: string, bytes: number, n: number): Promise<number> {
  const body = `{"pad":"${'x'.repeat(Math.max(0, bytes - 10))}"}`;
  const signature = `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
  const pool = new Pool(origin, { connections: CONCURRENCY });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const res = await pool.request({
          path: '/bare',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-event': 'bare', 'x-service-delivery': `bare-${i}`, 'x-service-signature': signature },
          body,
        });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`bare POST answered ${res.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return n / seconds;
}

/** Runs `git push -q <remote> <refspec>` from the source repository; resolves with the epoch ms at which git exited. */
async function push(src: string, remote: string, refspec: string): Promise<{ endedAt: number; ms: number }> {
  const ms = await timedGit(['push', '-q', remote, refspec], src);
  return { endedAt: Date.now(), ms };
}

/** The time split of the big push, in ms from its end, read from the database once every delivery has its result. */
async function split(db: Knex, pushedAt: number, lastReceived: number) {
  const bulk = (q: Knex.QueryBuilder) => q.where('events.type', 'push').where('events.ref', 'like', 'refs/heads/b%');
  /** min/max/count of the big push's rows: `select` names them, each a number or null. */
  const aggregate = async (q: Knex.QueryBuilder, select: string) => ((await bulk(q).select(db.raw(select)).first()) ?? {}) as Record<string, number | null>;
  const events = await aggregate(db('events'), 'min(events.created_at) as first, max(events.created_at) as last');
  const deliveries = await aggregate(
    db('deliveries').join('events', 'events.id', 'deliveries.event_id'),
    'min(deliveries.created_at) as first, max(deliveries.created_at) as last, max(deliveries.finished_at) as finished',
  );
  const attempts = await aggregate(
    db('delivery_attempts').join('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id').join('events', 'events.id', 'deliveries.event_id'),
    'min(delivery_attempts.started_at) as first, max(delivery_attempts.started_at) as last, ' +
      'max(delivery_attempts.started_at + delivery_attempts.duration_ms) as done, count(*) as n, avg(delivery_attempts.duration_ms) as mean_ms',
  );
  const since = (t: number | null | undefined) => (t === null || t === undefined ? null : Number(t) - pushedAt);
  // Per 100 ms from the push's end: events written and attempts started (where the pipeline stalls).
  const per100 = async (q: Knex.QueryBuilder, column: string) => {
    const rows = (await bulk(q).select(db.raw(`${column} as t`))) as { t: number }[];
    const counts: number[] = [];
    for (const { t } of rows) {
      const k = Math.max(0, Math.floor((Number(t) - pushedAt) / 100));
      while (counts.length <= k) counts.push(0);
      counts[k]++;
    }
    return counts;
  };
  return {
    attempts: Number(attempts.n ?? 0),
    per_100ms: {
      events: await per100(db('events'), 'events.created_at'),
      attempts_started: await per100(
        db('delivery_attempts').join('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id').join('events', 'events.id', 'deliveries.event_id'),
        'delivery_attempts.started_at',
      ),
    },
    split_ms: {
      recorded_first: since(events.first),
      recorded_last: since(events.last),
      fanned_out_first: since(deliveries.first),
      fanned_out_last: since(deliveries.last),
      first_attempt_started: since(attempts.first),
      last_attempt_started: since(attempts.last),
      last_attempt_finished: since(deliveries.finished ?? attempts.done),
      last_received: lastReceived - pushedAt,
      // How long one attempt took from its start to its answer (64 run at once).
      attempt_mean: attempts.mean_ms === null || attempts.mean_ms === undefined ? null : Number(Number(attempts.mean_ms).toFixed(1)),
    },
  };
}

/** Polls until every delivery of the big push has a result (status other than pending); the epoch ms when that was seen. */
async function resultsWritten(db: Knex, server: Child): Promise<number> {
  for (const started = Date.now(); Date.now() - started < STALL_MS;) {
    const row = await db('deliveries')
      .join('events', 'events.id', 'deliveries.event_id')
      .where('events.ref', 'like', 'refs/heads/b%')
      .where('deliveries.status', 'pending')
      .count({ n: '*' })
      .first();
    if (Number(row?.n) === 0) return Date.now();
    if (server.proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the deliveries of the big push were not all given a result');
}

/** A webhook's creation answer: the only one that carries its secret. */
interface CreatedWebhook {
  id: number;
  secret: string;
}

/** The repository, its webhook (created inactive, then pointed at the receiver started with its secret) and the waits. */
async function setUp(wharf: WharfChild) {
  await wharf.api('POST', '/api/v1/orgs', { name: 'bench' });
  await wharf.api('POST', '/api/v1/orgs/bench/repos', { name: 'app' });
  const hook = await wharf.api<CreatedWebhook>('POST', '/api/v1/repos/bench/app/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['push'], active: false });
  const rx = await startReceiver({ RECEIVER_SECRET: hook.secret, RECEIVER_LINES: '1' });
  await wharf.api('PATCH', `/api/v1/repos/bench/app/webhooks/${hook.id}`, { url: `${rx.url}/hook`, active: true });
  const remote = `${wharf.url.replace('http://', `http://x:${wharf.token}@`)}/bench/app.git`;
  return { rx, secret: hook.secret, remote };
}

/** One run's measurements. */
interface Run {
  rate: number;
  baseline: number;
  before: number;
  after: number;
  gitPushMs: number;
  payloadBytes: number;
  calibrationBytes: number;
  received: number;
  requests: number;
  badSignatures: number;
  attempts: number;
  split_ms: Record<string, number | null>;
  per_100ms: { events: number[]; attempts_started: number[] };
  resultsWrittenBy: number;
  latencies: number[];
}

/** One run on a fresh database, server and receiver: the single pushes, the calibration, the baseline, the big push, the baseline again. */
async function runOnce(dir: string, src: string, shas: Shas, dialect: Dialect): Promise<Run> {
  const database = await freshDatabase(dir, dialect === 'postgres' ? postgresServer : undefined, 'wharf_bench_pushdelivery');
  const wharf = await serveWharf(dir, database.url);
  const db = connect(database.url);
  let rx: Child | undefined;
  try {
    const setup = await setUp(wharf);
    rx = setup.rx;
    const { remote, secret } = setup;
    const received = arrivals(setup.rx, wharf);
    // 2. One commit at a time on main; the first push (creating main) only warms up.
    const latencies: number[] = [];
    for (let k = 0; k <= PUSHES; k++) {
      const sha = shas.get(`main${k}`)!;
      const from = received.all.length;
      const { endedAt } = await push(src, remote, `${sha}:refs/heads/main`);
      const a = await received.until(`the delivery of push ${k}`, pushOf(sha), from);
      if (k > 0) latencies.push(a.at - endedAt);
    }
    // The size of the big push's payloads, before it: a branch like theirs, pushed alone.
    const calibration = shas.get(CALIBRATION)!;
    await push(src, remote, `refs/heads/${CALIBRATION}:refs/heads/${CALIBRATION}`);
    const calibrationBytes = (await received.until('the calibration delivery', pushOf(calibration), 0)).bytes;
    // Untimed first: bare POSTs speed up some fivefold over their first ~15,000 (the client's
    // and the receiver's JIT), so a cold before-baseline would be a fraction of the after one.
    await bareRate(setup.rx.url, secret, calibrationBytes, WARM_UP);
    const before = await bareRate(setup.rx.url, secret, calibrationBytes, BASELINE_POSTS);
    // 1. The big push, until the receiver has a delivery for every branch.
    const branches = new Set(Array.from({ length: BRANCHES }, (_, i) => shas.get(`b${i + 1}`)!));
    const firsts = new Map<string, Arrival>();
    const from = received.all.length;
    const ours = (a: Arrival) => a.path === '/hook' && branches.has(a.after);
    const pushed = await push(src, remote, 'refs/heads/b*:refs/heads/b*');
    const last = await received.until(
      `${BRANCHES} deliveries`,
      (a) => {
        if (!ours(a)) return false;
        if (!firsts.has(a.guid)) firsts.set(a.guid, a);
        return firsts.size === BRANCHES;
      },
      from,
    );
    const rate = BRANCHES / (Math.max(1, last.at - pushed.endedAt) / 1000);
    const payloadBytes = median([...firsts.values()].map((a) => a.bytes));
    const resultsAt = await resultsWritten(db, wharf);
    const after = await bareRate(setup.rx.url, secret, payloadBytes, BASELINE_POSTS);
    const { attempts, split_ms, per_100ms } = await split(db, pushed.endedAt, last.at);
    return {
      rate,
      baseline: (before + after) / 2,
      before,
      after,
      gitPushMs: pushed.ms,
      payloadBytes,
      calibrationBytes,
      received: firsts.size,
      requests: received.all.slice(from).filter(ours).length,
      badSignatures: received.all.filter((a) => !a.signatureOk).length,
      attempts,
      split_ms,
      per_100ms,
      resultsWrittenBy: resultsAt - pushed.endedAt,
      latencies,
    };
  } catch (err) {
    // What the server logged (warnings and errors) says more than a push's 500.
    throw new Error(`${dialect} run: ${(err as Error).message}\nwharf serve logged:\n${wharf.out().slice(-4000)}`, { cause: err });
  } finally {
    await db.destroy();
    // A profiled server stops cleanly, so it writes its profile.
    wharf.proc.kill(process.env.BENCH_CPU_PROFILE ? 'SIGTERM' : 'SIGKILL');
    rx?.proc.kill('SIGKILL');
    await Promise.all([wharf.exited, rx?.exited]);
    await database.drop();
  }
}

/** The figures of one dialect, from its runs. */
function figures(dialect: Dialect, runs: Run[]): Figure[] {
  const rates = runs.map((r) => r.rate);
  // The median run (by rate) gives the baseline, ratio and split: all from one run.
  const m = runs.find((r) => r.rate === median(rates))!;
  const ratio = m.rate / m.baseline;
  const p50s = runs.map((r) => percentile(r.latencies, 50));
  const p99s = runs.map((r) => percentile(r.latencies, 99));
  const latencyFigure = (which: 'p50' | 'p99', values: number[], note: string): Figure => ({
    figure: `push_to_delivery_${which}_${dialect}`,
    value: median(values),
    unit: 'ms',
    target: '≤ 50 ms',
    met: median(values) <= 50,
    ...spread(values),
    pushes: PUSHES,
    note,
  });
  const latencyNote = `ms from a \`git push\` of one commit exiting to the receiver having its delivery; per run the p50/p99 of ${PUSHES} pushes, then the median of the runs`;
  return [
    {
      figure: `push_to_last_delivery_${dialect}`,
      value: Math.round(m.rate),
      unit: 'deliveries/s',
      baseline: Math.round(m.baseline),
      ratio: Number(ratio.toFixed(3)),
      target: '≥ 0.6 of bare undici POSTs',
      met: ratio >= 0.6 && m.badSignatures === 0,
      ...spread(rates),
      ratios: runs.map((r) => Number((r.rate / r.baseline).toFixed(3))),
      branches: BRANCHES,
      git_push_ms: Math.round(m.gitPushMs),
      baseline_before: Math.round(m.before),
      baseline_after: Math.round(m.after),
      baseline_concurrency: CONCURRENCY,
      baseline_posts: BASELINE_POSTS,
      baseline_warm_up_posts: WARM_UP,
      payload_bytes: m.payloadBytes,
      baseline_before_body_bytes: m.calibrationBytes,
      received: m.received,
      requests: m.requests,
      attempts: m.attempts,
      bad_signatures: m.badSignatures,
      split_ms: { ...m.split_ms, all_results_written_by: m.resultsWrittenBy },
      per_100ms: m.per_100ms,
      note: 'deliveries/s from the push process exiting to the receiver having the last distinct X-Service-Delivery; split_ms from the push end, from the rows written (events, deliveries, attempts)',
    },
    latencyFigure('p50', p50s, latencyNote),
    latencyFigure('p99', p99s, `${latencyNote} (of ${PUSHES}, the p99 is the slowest)`),
  ];
}

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-pushdelivery-'));
  try {
    const { src, shas } = await sourceRepository(dir);
    const dialects: Dialect[] = postgresServer ? ['sqlite', 'postgres'] : ['sqlite'];
    for (const dialect of dialects) {
      const runs: Run[] = [];
      for (let i = 0; i < RUNS; i++) {
        const runDir = path.join(dir, `${dialect}-${i}`);
        fs.mkdirSync(runDir);
        runs.push(await runOnce(runDir, src, shas, dialect));
        fs.rmSync(runDir, { recursive: true, force: true });
        process.stderr.write(
          `pushDelivery ${dialect} run ${i + 1}/${RUNS}: ${Math.round(runs[i].rate)} deliveries/s, p50 ${percentile(runs[i].latencies, 50)} ms\n`,
        );
      }
      for (const f of figures(dialect, runs)) report(f);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
