// Wharf's dispatcher beside what a Node team would build instead: a durable job queue
// whose job signs a ~1 KB JSON body (HMAC-SHA256, X-Service-Signature) and POSTs it with
// undici, the job completed only after a 2xx. Every side sends BENCH_PEER_JOBS (3,000)
// bodies to the same receiver, in a process of its own, that checks every signature and
// answers 200 at once, with 64 in flight:
//  - graphile-worker on Postgres (a fresh database), tuned as its performance docs advise
//    (localQueue, batched completions, a pool as large as the concurrency), and with its
//    defaults but the concurrency;
//  - BullMQ on Redis at 127.0.0.1:6379 (started with redis-server if nothing answers
//    there; skipped, with a line on stderr, if that fails too);
//  - Wharf's dispatcher alone, in this process as in delivery.bench.ts: deliveries written
//    beforehand, parked, then made due at one moment (SQLite, and Postgres);
//  - bare undici POSTs of the same bodies, taken before and after the others and averaged:
//    the baseline, as in the other delivery benches.
// The queues' jobs are enqueued in one batch before their clock starts, and the clock runs
// from the worker's start (its few milliseconds of connecting included) to the last job
// recorded as done in the queue's own store (Postgres rows gone, BullMQ's `completed`
// events); Wharf's from the due time to the last result written. Each figure is the median
// of BENCH_RUNS (5) runs, each with a fresh receiver, databases and queue, with its spread.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import pg from 'pg';
import { Logger, makeWorkerUtils, run, type RunnerOptions } from 'graphile-worker';
import { Queue, Worker } from 'bullmq';
import type { Knex } from 'knex';
import type { Bench, Figure } from './run.ts';
import { freshDatabase, median, RUNS, spread, startReceiver, type ReceiverStats, wharfInProcess } from './fixtures.ts';
import { findOrg } from '../src/domain/accounts.ts';
import { createRepository } from '../src/domain/repos.ts';
import { recordEvents } from '../src/events/outbox.ts';
import { wake } from '../src/services.ts';
import { createWebhook } from '../src/webhooks/store.ts';

const JOBS = Math.max(1, Number(process.env.BENCH_PEER_JOBS ?? 3000) || 3000);
/** In flight at once on every side: WEBHOOK_CONCURRENCY's default. */
const CONCURRENCY = 64;
/** Untimed bare POSTs first: the receiver's and this process's JIT speed the first thousands up severalfold. */
const WARM_UP = 10_000;
/** A side fails when its jobs are not all done by then. */
const SIDE_CAP_MS = 120_000;
/** Every side signs with this, and the receiver checks it. */
const SECRET = 'peers-bench-secret';
const FAR = 8_000_000_000_000;
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = { host: '127.0.0.1', port: 6379 };

/** A push-like payload of about 1 KB. */
function payload(i: number) {
  return {
    ref: 'refs/heads/main',
    before: '0'.repeat(40),
    after: randomBytes(20).toString('hex'),
    commits: [
      {
        id: randomBytes(20).toString('hex'),
        message: `Commit ${i}: fix the thing that was broken`,
        author: { name: 'Ada Lovelace', email: 'ada@example.com' },
      },
    ],
    repository: { id: 1, name: 'app', full_name: 'acme/app', url: 'http://127.0.0.1/acme/app', visibility: 'private', default_branch: 'main' },
    sender: { login: 'ada', type: 'User' },
    pad: 'x'.repeat(560),
  };
}

/** What every peer's job does: sign the body, POST it, read the answer; throws unless 2xx (the job then fails). */
async function deliver(pool: Pool, body: string, id: string): Promise<void> {
  const signature = `sha256=${createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(body).digest('hex')}`;
  const res = await pool.request({
    path: '/hook',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-event': 'push', 'x-service-delivery': id, 'x-service-signature': signature },
    body,
  });
  await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`POST answered ${res.statusCode}`);
}

/** A keep-alive pool of CONCURRENCY connections to the receiver, as a Node service would hold. */
const poolFor = (origin: string) => new Pool(origin, { connections: CONCURRENCY, keepAliveTimeout: 30_000 });

/** Bare undici: the bodies POSTed by `deliver`, CONCURRENCY in flight; per second. */
async function bareRate(origin: string, bodies: string[]): Promise<number> {
  const pool = poolFor(origin);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const i = next++;
        await deliver(pool, bodies[i], `bare-${i}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return bodies.length / seconds;
}

/** Resolves `until` polled every `everyMs`, or throws after SIDE_CAP_MS. */
async function waitFor(what: string, until: () => Promise<boolean>, everyMs: number): Promise<void> {
  for (const started = Date.now(); Date.now() - started < SIDE_CAP_MS;) {
    if (await until()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what}: not done within ${SIDE_CAP_MS / 1000} s`);
}

/** graphile-worker's messages: errors only, on stderr (a line per job would cost the run). */
const quietLogger = new Logger(() => (level, message) => {
  if (`${level}` === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
});

/** graphile-worker's options for one side: defaults but the concurrency, or tuned for throughput as its docs advise. */
function graphileOptions(tuned: boolean): Partial<RunnerOptions> {
  if (!tuned) return { concurrency: CONCURRENCY };
  return {
    concurrency: CONCURRENCY,
    // It warns when its pool is smaller than the concurrency.
    maxPoolSize: CONCURRENCY,
    preset: { worker: { localQueue: { size: 2 * CONCURRENCY }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  };
}

/** graphile-worker: the jobs added in one addJobs call, then a runner started; jobs per second until the jobs table is empty. */
async function graphileRate(dir: string, origin: string, bodies: string[], tuned: boolean): Promise<number> {
  const database = await freshDatabase(dir, postgresServer, 'wharf_bench_peers_graphile');
  const pool = poolFor(origin);
  const probe = new pg.Client({ connectionString: database.url });
  try {
    const utils = await makeWorkerUtils({ connectionString: database.url, logger: quietLogger });
    try {
      await utils.migrate();
      await utils.addJobs(bodies.map((body, i) => ({ identifier: 'deliver', payload: { body, id: `graphile-${i}` } })));
    } finally {
      await utils.release();
    }
    await probe.connect();
    let failures = 0;
    const t0 = performance.now();
    const runner = await run({
      connectionString: database.url,
      noHandleSignals: true,
      logger: quietLogger,
      taskList: {
        deliver: async (p) => {
          const { body, id } = p as { body: string; id: string };
          await deliver(pool, body, id).catch((err) => {
            failures++;
            throw err;
          });
        },
      },
      ...graphileOptions(tuned),
    });
    try {
      // A completed job's row is deleted; a failed one stays (retried later), so the wait ends only when all succeeded.
      await waitFor(
        'graphile-worker',
        async () => {
          if (failures > 0) throw new Error(`graphile-worker: ${failures} jobs failed`);
          return Number((await probe.query('SELECT count(*) AS n FROM graphile_worker.jobs')).rows[0].n) === 0;
        },
        10,
      );
      return bodies.length / ((performance.now() - t0) / 1000);
    } finally {
      await runner.stop();
    }
  } finally {
    await probe.end().catch(() => {});
    await pool.close();
    await database.drop();
  }
}

/** True when something at 127.0.0.1:6379 answers PING with PONG within a second. */
function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(REDIS.port, REDIS.host);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Redis for BullMQ: the one answering on 127.0.0.1:6379, else one started there (loopback only, nothing saved); null and why when neither. */
async function redisReady(): Promise<string | null> {
  if (await redisAnswers()) return null;
  const started = spawnSync(
    'redis-server',
    ['--daemonize', 'yes', '--bind', '127.0.0.1 -::1', '--port', String(REDIS.port), '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
      timeout: 10_000,
    },
  );
  if (started.error || started.status !== 0) return `redis-server could not be started (${started.error?.message ?? `exit ${started.status}`})`;
  // Bounded: up to 5 s for it to answer.
  for (let i = 0; i < 50; i++) {
    if (await redisAnswers()) return null;
    await new Promise((r) => setTimeout(r, 100));
  }
  return 'redis-server was started but does not answer on 127.0.0.1:6379';
}

/** BullMQ: the jobs added in one addBulk call to a queue of its own, then a Worker started; jobs per second until it has completed them all. */
async function bullmqRate(origin: string, bodies: string[]): Promise<number> {
  const connection = { ...REDIS, maxRetriesPerRequest: null };
  const name = `wharf-bench-peers-${randomBytes(4).toString('hex')}`;
  const queue = new Queue(name, { connection });
  const pool = poolFor(origin);
  let worker: Worker | undefined;
  try {
    await queue.addBulk(bodies.map((body, i) => ({ name: 'deliver', data: { body, id: `bullmq-${i}` } })));
    let completed = 0;
    let failed = 0;
    const t0 = performance.now();
    worker = new Worker(name, async (job) => deliver(pool, job.data.body, job.data.id), { connection, concurrency: CONCURRENCY });
    // `completed` is emitted once the job has been moved to completed in Redis: its result is recorded.
    worker.on('completed', () => completed++);
    worker.on('failed', () => failed++);
    await waitFor(
      'BullMQ',
      async () => {
        if (failed > 0) throw new Error(`BullMQ: ${failed} jobs failed`);
        return completed >= bodies.length;
      },
      2,
    );
    return bodies.length / ((performance.now() - t0) / 1000);
  } finally {
    await worker?.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    await pool.close();
  }
}

/**
 * Wharf's dispatcher alone: a repository whose webhook (secret SECRET) points at the
 * receiver, the deliveries written as delivery.bench.ts writes them (events recorded,
 * parked far ahead in the same transaction), all made due at one moment a second ahead,
 * and the clock run from then until every one is recorded as a success.
 */
async function wharfRate(dir: string, dialect: 'sqlite' | 'postgres', origin: string, bodies: string[]): Promise<number> {
  const database = await freshDatabase(dir, dialect === 'postgres' ? postgresServer : undefined, 'wharf_bench_peers');
  const running = await wharfInProcess(dir, database.url, { WEBHOOK_CONCURRENCY: String(CONCURRENCY) });
  try {
    const { db, config } = running.services;
    const org = (await findOrg(db, 'demo'))!;
    const repo = await createRepository({ db, config, signals: new EventEmitter() }, { org, name: 'app', visibility: 'private' });
    const admin = await db('users').where('login', 'admin').first();
    await createWebhook({ db, config, signals: new EventEmitter() }, repo, admin, { url: `${origin}/hook`, active: false, events: ['push'], secret: SECRET });
    await db('webhooks').where('repository_id', repo.id).update({ active: true });
    for (let i = 0; i < bodies.length; i += 2000) {
      await db.transaction(async (trx: Knex.Transaction) => {
        const batch = bodies
          .slice(i, i + 2000)
          .map((b) => ({ repositoryId: repo.id, type: 'push' as const, ref: 'refs/heads/main', senderId: null, payload: JSON.parse(b) }));
        await recordEvents(trx, batch);
        await trx('deliveries').where('status', 'pending').update({ next_attempt_at: FAR });
      });
    }
    const dueAt = Date.now() + 1000;
    await db('deliveries').where('status', 'pending').update({ next_attempt_at: dueAt });
    await new Promise((r) => setTimeout(r, Math.max(0, dueAt - Date.now())));
    const t0 = performance.now();
    wake(running.services).deliveries();
    await waitFor(
      `Wharf on ${dialect}`,
      async () => {
        const [{ n }] = await db('deliveries').where('status', 'success').count({ n: '*' });
        return Number(n) >= bodies.length;
      },
      5,
    );
    return bodies.length / ((performance.now() - t0) / 1000);
  } finally {
    await running.stop();
    await database.drop();
  }
}

/** True when the Postgres server answers. */
async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: postgresServer, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A side of the comparison: its figure's name, what it is, and one timed pass. */
interface Side {
  name: string;
  peer: boolean;
  what: string;
  rate: (dir: string, origin: string, bodies: string[]) => Promise<number>;
}

/** The sides this machine can run: Postgres ones when it answers, BullMQ when Redis does. */
async function sides(): Promise<Side[]> {
  const list: Side[] = [];
  const postgres = await postgresAnswers();
  if (!postgres) process.stderr.write(`peers: Postgres at ${new URL(postgresServer).host} does not answer; graphile-worker and Wharf on Postgres skipped\n`);
  if (postgres) {
    list.push({
      name: 'graphile_worker_tuned',
      peer: true,
      what: `graphile-worker, concurrency ${CONCURRENCY}, maxPoolSize ${CONCURRENCY}, localQueue.size ${2 * CONCURRENCY}, completeJobBatchDelay 0, failJobBatchDelay 0`,
      rate: (dir, origin, bodies) => graphileRate(dir, origin, bodies, true),
    });
    list.push({
      name: 'graphile_worker_defaults',
      peer: true,
      what: `graphile-worker, concurrency ${CONCURRENCY}, all else its defaults`,
      rate: (dir, origin, bodies) => graphileRate(dir, origin, bodies, false),
    });
  }
  const noRedis = await redisReady();
  if (noRedis) process.stderr.write(`peers: ${noRedis}; BullMQ skipped\n`);
  else
    list.push({
      name: 'bullmq',
      peer: true,
      what: `BullMQ, Worker concurrency ${CONCURRENCY}, defaults otherwise`,
      rate: (_dir, origin, bodies) => bullmqRate(origin, bodies),
    });
  list.push({ name: 'wharf_sqlite', peer: false, what: 'Wharf dispatcher on SQLite', rate: (dir, origin, bodies) => wharfRate(dir, 'sqlite', origin, bodies) });
  if (postgres)
    list.push({
      name: 'wharf_postgres',
      peer: false,
      what: 'Wharf dispatcher on Postgres',
      rate: (dir, origin, bodies) => wharfRate(dir, 'postgres', origin, bodies),
    });
  return list;
}

/** One run: every side's rate, the baseline before and after, and what the receiver saw. */
interface Run {
  rates: Map<string, number>;
  /** Mean body bytes the receiver had from each side. */
  bytes: Map<string, number>;
  before: number;
  after: number;
  stats: ReceiverStats;
}

/** One run with a fresh receiver: warm-up, baseline, every side in turn, baseline again. */
async function runOnce(list: Side[], bodies: string[]): Promise<Run> {
  const rx = await startReceiver({ RECEIVER_SECRET: SECRET });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-peers-'));
  try {
    await bareRate(
      rx.url,
      Array.from({ length: WARM_UP }, (_, i) => bodies[i % bodies.length]),
    );
    const before = await bareRate(rx.url, bodies);
    const rates = new Map<string, number>();
    const bytes = new Map<string, number>();
    for (const side of list) {
      const sideDir = path.join(dir, side.name);
      fs.mkdirSync(sideDir);
      const from = await rx.stats();
      rates.set(side.name, await side.rate(sideDir, rx.url, bodies));
      const to = await rx.stats();
      const got = to.requests - from.requests;
      if (got < bodies.length) throw new Error(`${side.name}: the receiver had ${got} of ${bodies.length} requests`);
      bytes.set(side.name, (to.bytes - from.bytes) / got);
    }
    const after = await bareRate(rx.url, bodies);
    return { rates, bytes, before, after, stats: await rx.stats() };
  } finally {
    rx.proc.kill('SIGKILL');
    await rx.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures from the runs: each side's median rate with its ratio to bare undici, and Wharf's ratio to the best peer. */
function figures(list: Side[], runs: Run[]): Figure[] {
  const baselines = runs.map((r) => (r.before + r.after) / 2);
  const valid = runs.every((r) => r.stats.bad_signatures === 0);
  const bestPeer = (r: Run) => Math.max(...list.filter((s) => s.peer).map((s) => r.rates.get(s.name)!));
  const base = { jobs: JOBS, concurrency: CONCURRENCY, bad_signatures: runs.reduce((n, r) => n + r.stats.bad_signatures, 0) };
  return list.map((side) => {
    const rates = runs.map((r) => r.rates.get(side.name)!);
    const ratios = runs.map((r, i) => r.rates.get(side.name)! / baselines[i]);
    const peerRatios = list.some((s) => s.peer) ? runs.map((r) => r.rates.get(side.name)! / bestPeer(r)) : [];
    const m = median(ratios);
    return {
      figure: `peers_${side.name}_jobs_per_second`,
      value: Math.round(median(rates)),
      unit: 'jobs/s',
      baseline: Math.round(median(baselines)),
      ratio: Number(m.toFixed(3)),
      target: side.peer ? 'none: a peer, measured beside Wharf' : 'none: compared with bare undici and the best peer',
      met: valid,
      ...spread(rates),
      ratio_spread: spread(ratios, 3),
      ...(side.peer || peerRatios.length === 0
        ? {}
        : {
            ratio_to_best_peer: Number(median(peerRatios).toFixed(3)),
            ratio_to_best_peer_spread: spread(peerRatios, 3),
            best_peer: list
              .filter((s) => s.peer)
              .sort((a, b) => median(runs.map((r) => r.rates.get(b.name)!)) - median(runs.map((r) => r.rates.get(a.name)!)))[0].name,
          }),
      baseline_runs: baselines.map(Math.round),
      body_bytes: Math.round(median(runs.map((r) => r.bytes.get(side.name)!))),
      ...base,
      what: side.what,
      note: `jobs per second, ${JOBS} jobs enqueued (or deliveries made due) at once, ${CONCURRENCY} in flight, to one receiver in its own process that checks every HMAC-SHA256 signature; baseline: bare undici POSTs of the same bodies, before and after, averaged; median of ${RUNS} runs`,
    };
  });
}

const bench: Bench = async (report) => {
  const bodies = Array.from({ length: JOBS }, (_, i) => JSON.stringify(payload(i)));
  const list = await sides();
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    runs.push(await runOnce(list, bodies));
    const r = runs[i];
    process.stderr.write(
      `peers run ${i + 1}/${RUNS}: bare ${Math.round((r.before + r.after) / 2)}/s, ${[...r.rates].map(([k, v]) => `${k} ${Math.round(v)}/s`).join(', ')}\n`,
    );
  }
  for (const f of figures(list, runs)) report(f);
};

export default bench;
