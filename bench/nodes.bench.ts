// Several nodes (SPEC §13): 1 and then 3 `wharf serve` processes on one Postgres database,
// sharing REPOS_DIR, SECRET_KEY and (when Swift is installed: scripts/swift.sh install) LFS in
// a bucket of a local Swift, as an installation of several nodes runs. A `git push` of
// BENCH_NODES_DELIVERIES (5,000) new branches to the first node makes one push delivery each,
// to a receiver in a process of its own that checks every signature and answers after 100 ms
// (the latency-bound case real receivers are). Clocks run from the push's process exiting to
// the receiver having the last distinct X-Service-Delivery. The figure is the rate of 3 nodes
// over the rate of 1, each the median of BENCH_RUNS (5) runs on a fresh database, one figure
// for each WEBHOOK_CONCURRENCY of BENCH_NODES_CONCURRENCY (64 and 16); 3× is the limit (three
// times WEBHOOK_CONCURRENCY in flight). Every run also checks what SPEC §5.3
// promises: every delivery arrived, once, signed, and is recorded `success` with one attempt.
// Needs Postgres: BENCH_DATABASE_URL or TEST_DATABASE_URL.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { connect } from '../src/db/connect.ts';
import type { Bench } from './run.ts';
import { cpuUsed, readCores, readCpu } from './cpu.ts';
import { startSwift, type TestSwift } from '../test/helpers/swift.ts';
import { child, freshDatabase, median, RUNS, spread, startReceiver, timedGit, wharfEnv, type Child } from './fixtures.ts';

const DELIVERIES = Math.max(1, Number(process.env.BENCH_NODES_DELIVERIES ?? 5000) || 5000);
const RECEIVER_DELAY_MS = 100;
/**
 * The WEBHOOK_CONCURRENCY of each node, a figure each: BENCH_NODES_CONCURRENCY, a list,
 * `64,16` unless set. At 64 the nodes of a two-core machine ask for more CPU than it has
 * (the cores set the rate); 16 asks for less at the limit, which shows whether nodes add
 * throughput where the cores are not the limit.
 */
const CONCURRENCIES = [
  ...new Set(
    (process.env.BENCH_NODES_CONCURRENCY ?? '64,16')
      .split(',')
      .map((c) => Math.floor(Number(c)))
      .filter((c) => c > 0),
  ),
];
const NODES = 3;
const STALL_MS = 60_000;
/** BENCH_CPU_PROFILE=<dir>: every node writes its V8 CPU profile there as it stops (open it in Chrome's DevTools). */
const PROFILE = process.env.BENCH_CPU_PROFILE;
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;

/** A source repository with DELIVERIES branches b1…bN, each one root commit of its own file (fixed times: the same ids every run). */
async function sourceRepository(dir: string): Promise<string> {
  const src = path.join(dir, 'src.git');
  const lines: string[] = [];
  for (let i = 1; i <= DELIVERIES; i++) {
    const message = `Branch ${i}\n`;
    const text = `branch ${i}\n`;
    lines.push(`commit refs/heads/b${i}`, `committer Ada Lovelace <ada@example.com> ${1_700_000_000 + i} +0000`, `data ${message.length}`, message);
    lines.push(`M 644 inline b${i}.txt`, `data ${text.length}`, text);
  }
  await timedGit(['init', '-q', '--bare', src], dir);
  await timedGit(['fast-import', '--quiet'], src, (stdin) => stdin.end(lines.join('\n') + '\n'));
  return src;
}

/** A started node: its process and address. */
type Node = Child & { url: string };

/** Starts `wharf serve` node `k` of an installation under `dir`: the shared settings, a DATA_DIR of its own. */
async function startNode(dir: string, databaseUrl: string, shared: Record<string, string>, k: number): Promise<Node> {
  const node = await child(
    process.execPath,
    [
      ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []),
      path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'wharf.js'),
      'serve',
    ],
    { ...process.env, ...wharfEnv(dir, databaseUrl), LOG_LEVEL: 'warn', ...shared, DATA_DIR: path.join(dir, `data-${k}`) },
    // The first start of a database prints the admin token in the same write as its address.
    k === 1 ? /sign in with this token: wharf_\S+/ : /listening on http:\/\/\S+/,
  );
  return { ...node, url: /listening on (http:\/\/\S+)/.exec(node.out())![1] };
}

/** The delivery attempts a node made, from its GET /metrics. */
async function attemptsOf(node: Node): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  return [...text.matchAll(/^wharf_delivery_attempts_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/** One run's measurement and its checks. */
interface Run {
  nodes: number;
  rate: number;
  /** Deliveries per second from the first arrival to the last (the push's recording left out). */
  steadyRate: number;
  firstArrivalMs: number;
  gitPushMs: number;
  perNode: number[];
  attemptsPer100ms: number[];
  eventsPer100ms: number[];
  attemptMeanMs: number;
  /** CPU milliseconds from the push's end to the last result, per delivery: the nodes (with their git), Postgres, the receiver. */
  cpuPerDelivery: { nodes: number; postgres: number; receiver: number };
  /** Cores busy on average over that time (the machine's, whatever used them), or null without /proc. */
  coresBusy: number | null;
  /** What SPEC §5.3 promises that this run broke: 0 each. */
  missing: number;
  duplicates: number;
  badSignatures: number;
  notSucceeded: number;
  attemptRows: number;
}

async function runOnce(dir: string, src: string, nodes: number, concurrency: number, swift: TestSwift | null): Promise<Run> {
  const database = await freshDatabase(dir, postgresServer, 'wharf_bench_nodes');
  const shared = {
    SECRET_KEY: randomBytes(32).toString('hex'),
    // A bucket of its own each run, as a fresh installation has.
    ...(swift ? swift.env(await swift.bucket()) : {}),
    WEBHOOK_CONCURRENCY: String(concurrency),
  };
  const started: Node[] = [];
  let rx: Awaited<ReturnType<typeof startReceiver>> | undefined;
  const db = connect(database.url);
  try {
    started.push(await startNode(dir, database.url, shared, 1));
    const first = started[0];
    for (let k = 2; k <= nodes; k++) started.push(await startNode(dir, database.url, shared, k));
    const token = /sign in with this token: (wharf_\S+)/.exec(first.out())![1];
    const api = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
      const res = await fetch(first.url + p, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    await api('POST', '/api/v1/orgs', { name: 'bench' });
    await api('POST', '/api/v1/orgs/bench/repos', { name: 'app' });
    const hook = await api<{ id: number; secret: string }>('POST', '/api/v1/repos/bench/app/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['push'],
      active: false,
    });
    rx = await startReceiver({ RECEIVER_SECRET: hook.secret, RECEIVER_DELAY_MS: String(RECEIVER_DELAY_MS) });
    await api('PATCH', `/api/v1/repos/bench/app/webhooks/${hook.id}`, { url: `${rx.url}/hook`, active: true });
    const remote = `${first.url.replace('http://', `http://x:${token}@`)}/bench/app.git`;

    const gitPushMs = await timedGit(['push', '-q', remote, 'refs/heads/*:refs/heads/*'], src);
    const pushedAt = Date.now();
    const cpuBefore = readCpu();
    const coresBefore = readCores();
    // Until every push delivery is recorded and has its result (the receiver's last arrival timed to the ms).
    // The database is asked only once the receiver has them all: the bench's own queries are not what it measures.
    let seen = 0;
    for (let quietSince = Date.now(); ;) {
      const { requests, guids } = await rx.stats();
      if (guids >= DELIVERIES) {
        const [row] = await db('deliveries')
          .where('event', 'push')
          .select(db.raw("count(*) AS total, sum(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending"));
        if (Number(row.total) === DELIVERIES && Number(row.pending ?? 0) === 0) break;
      }
      if (requests > seen) [seen, quietSince] = [requests, Date.now()];
      if (Date.now() - quietSince > STALL_MS) throw new Error(`${requests} requests arrived of ${DELIVERIES}; nothing more for ${STALL_MS / 1000} s`);
      if (started.some((n) => n.proc.exitCode !== null)) throw new Error('a node exited');
      await new Promise((r) => setTimeout(r, 50));
    }
    const coresAfter = readCores();
    const nodePids = new Set(started.map((n) => n.proc.pid));
    const cpu = cpuUsed(cpuBefore, readCpu(), (pid, comm) =>
      nodePids.has(pid) ? 'nodes' : pid === rx!.proc.pid ? 'receiver' : comm === 'postgres' ? 'postgres' : null,
    );
    const perDelivery = (group: string) => Number(((cpu[group] ?? 0) / DELIVERIES).toFixed(3));
    const stats = await rx.stats();
    const rows = await db('deliveries').where('event', 'push').select('status', 'attempts');
    const [{ n: attemptRows }] = await db('delivery_attempts').whereIn('delivery_id', db('deliveries').where('event', 'push').select('id')).count({ n: '*' });
    const perNode = await Promise.all(started.map(attemptsOf));
    // Attempts started per 100 ms from the push's end, and events recorded: where the run is slower than the limit.
    const per100 = async (table: string, column: string, where: (q: Knex.QueryBuilder) => Knex.QueryBuilder) => {
      const counts: number[] = [];
      for (const { t } of (await where(db(table)).select(db.raw(`${column} AS t`))) as { t: number }[]) {
        const k = Math.max(0, Math.floor((Number(t) - pushedAt) / 100));
        while (counts.length <= k) counts.push(0);
        counts[k]++;
      }
      return counts;
    };
    const attemptsPer100ms = await per100('delivery_attempts', 'started_at', (q) =>
      q.whereIn('delivery_id', db('deliveries').where('event', 'push').select('id')),
    );
    const eventsPer100ms = await per100('events', 'created_at', (q) => q.where('type', 'push'));
    const [{ mean }] = await db('delivery_attempts').avg({ mean: 'duration_ms' });
    const succeeded = rows.filter((r) => r.status === 'success' && Number(r.attempts) === 1).length;
    return {
      nodes,
      rate: DELIVERIES / ((stats.last - pushedAt) / 1000),
      steadyRate: DELIVERIES / ((stats.last - stats.first) / 1000),
      firstArrivalMs: stats.first - pushedAt,
      gitPushMs,
      perNode,
      attemptsPer100ms,
      eventsPer100ms,
      attemptMeanMs: Number(Number(mean).toFixed(1)),
      cpuPerDelivery: { nodes: perDelivery('nodes'), postgres: perDelivery('postgres'), receiver: perDelivery('receiver') },
      coresBusy:
        coresBefore && coresAfter
          ? Number(((os.cpus().length * (coresAfter.busy - coresBefore.busy)) / Math.max(1, coresAfter.total - coresBefore.total)).toFixed(2))
          : null,
      missing: Math.max(0, DELIVERIES - stats.guids),
      duplicates: stats.requests - stats.guids,
      badSignatures: stats.bad_signatures,
      notSucceeded: DELIVERIES - succeeded,
      attemptRows: Number(attemptRows),
    };
  } finally {
    await db.destroy();
    // A profiled node writes its profile as it stops, which a SIGKILL would not let it do.
    for (const n of started) n.proc.kill(PROFILE ? 'SIGTERM' : 'SIGKILL');
    rx?.proc.kill('SIGKILL');
    await Promise.all([...started.map((n) => n.exited), rx?.exited]);
    await database.drop();
  }
}

/** Where a set of runs' time went, for the report: rates, attempts, CPU per delivery, and the median run per 100 ms. */
function summary(rs: Run[]) {
  const cpu = (group: keyof Run['cpuPerDelivery']) =>
    spread(
      rs.map((r) => r.cpuPerDelivery[group]),
      3,
    );
  const medianRun = rs.find((r) => r.rate === median(rs.map((x) => x.rate)))!;
  return {
    rate: spread(rs.map((r) => r.rate)),
    steady_rate: spread(rs.map((r) => r.steadyRate)),
    first_arrival_ms: spread(rs.map((r) => r.firstArrivalMs)),
    git_push_ms: spread(rs.map((r) => r.gitPushMs)),
    attempts_per_node: rs.map((r) => r.perNode),
    attempt_mean_ms: rs.map((r) => r.attemptMeanMs),
    // Where the time went: CPU ms per delivery (nodes with their git, Postgres, the receiver) and the cores busy meanwhile.
    cpu_ms_per_delivery: { nodes: cpu('nodes'), postgres: cpu('postgres'), receiver: cpu('receiver') },
    cores_busy: rs.every((r) => r.coresBusy !== null)
      ? spread(
          rs.map((r) => r.coresBusy!),
          2,
        )
      : null,
    cores: os.cpus().length,
    median_run_per_100ms: { attempts_started: medianRun.attemptsPer100ms, events_recorded: medianRun.eventsPer100ms },
  };
}

/** What SPEC §5.3 promises that some runs broke, in deliveries: 0 when nothing was. */
const broken = (rs: Run[]) => rs.reduce((n, r) => n + r.missing + r.duplicates + r.badSignatures + r.notSucceeded + Math.abs(r.attemptRows - DELIVERIES), 0);

/** BENCH_RUNS runs of 1 and then 3 nodes at one WEBHOOK_CONCURRENCY, reported as one figure; returns every run. */
async function measure(dir: string, src: string, concurrency: number, swift: TestSwift | null, report: Parameters<Bench>[0]): Promise<Run[]> {
  const runs: Record<number, Run[]> = { 1: [], [NODES]: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const nodes of [1, NODES]) {
      const runDir = path.join(dir, `run-${concurrency}-${i}-${nodes}`);
      fs.mkdirSync(runDir);
      const run = await runOnce(runDir, src, nodes, concurrency, swift);
      runs[nodes].push(run);
      fs.rmSync(runDir, { recursive: true, force: true });
      process.stderr.write(
        `nodes run ${i + 1}/${RUNS}, concurrency ${concurrency}, ${nodes} node(s): ${Math.round(run.rate)} deliveries/s (${Math.round(run.steadyRate)}/s from the first arrival), per node ${run.perNode.join('/')}\n`,
      );
    }
  }
  const one = median(runs[1].map((r) => r.rate));
  const three = median(runs[NODES].map((r) => r.rate));
  const all = [...runs[1], ...runs[NODES]];
  report({
    figure: concurrency === 64 ? 'nodes_3_over_1_postgres' : `nodes_3_over_1_postgres_concurrency_${concurrency}`,
    value: Math.round(three),
    unit: 'deliveries/s',
    baseline: Math.round(one),
    ratio: Number((three / one).toFixed(3)),
    target: '≥ 2.8× one node (3× is the limit)',
    met: three / one >= 2.8 && broken(all) === 0,
    ratios: runs[NODES].map((r, i) => Number((r.rate / runs[1][i].rate).toFixed(3))),
    deliveries: DELIVERIES,
    receiver_delay_ms: RECEIVER_DELAY_MS,
    webhook_concurrency: concurrency,
    one_node_limit: (1000 / RECEIVER_DELAY_MS) * concurrency,
    lfs_store: swift ? 's3 (Swift)' : 'filesystem (Swift not installed)',
    one_node: summary(runs[1]),
    three_nodes: summary(runs[NODES]),
    note: 'deliveries/s from the `git push` of every branch exiting to the receiver having the last distinct X-Service-Delivery; median of the runs',
  });
  return all;
}

const bench: Bench = async (report) => {
  if (!postgresServer) {
    process.stderr.write('nodes: skipped, several nodes share one Postgres (set BENCH_DATABASE_URL or TEST_DATABASE_URL)\n');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-nodes-'));
  // The tests' Swift helper (test/helpers/swift.ts), with this bench standing in for a test: stopped at the end, none when not installed.
  const teardowns: (() => unknown)[] = [];
  const swift = await startSwift({ plan: () => {}, teardown: (fn) => void teardowns.push(fn) });
  try {
    const src = await sourceRepository(dir);
    const all: Run[] = [];
    for (const concurrency of CONCURRENCIES) all.push(...(await measure(dir, src, concurrency, swift, report)));
    report({
      figure: 'nodes_promises_broken_postgres',
      value: broken(all),
      unit: 'deliveries',
      target: '0: every delivery arrived once, signed, recorded success with one attempt',
      met: broken(all) === 0,
      missing: all.reduce((n, r) => n + r.missing, 0),
      duplicates: all.reduce((n, r) => n + r.duplicates, 0),
      bad_signatures: all.reduce((n, r) => n + r.badSignatures, 0),
      not_succeeded_once: all.reduce((n, r) => n + r.notSucceeded, 0),
      attempt_rows_off: all.reduce((n, r) => n + Math.abs(r.attemptRows - DELIVERIES), 0),
    });
  } finally {
    for (const fn of teardowns.reverse()) await fn();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
