// Shared by the benches: timing git, the generated 50 MB, 5,000-commit repository the git
// and import figures measure, fresh databases, and real `wharf serve` and receiver child
// processes for the benches that push to a server of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import inspector from 'node:inspector';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import knexLib from 'knex';
import { loadConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';

export const COMMITS = 5000;
const BLOB_BYTES = 10 * 1024; // random, so the pack stays ~50 MB

/** Runs git quietly and returns how long it took in ms; throws on failure. */
export function timedGit(args: string[], cwd: string, input?: (stdin: NodeJS.WritableStream) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('git', args, {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-2000)));
    if (input) input(child.stdin);
    else child.stdin.end();
    child.on('error', reject); // git missing, or a cwd that does not exist: a failed bench, not a crashed harness
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`git ${args[0]}: ${stderr}`))));
  });
}

/** A fast-import stream of COMMITS commits, each changing one of 50 files to fresh random bytes, with a tag every 500. */
function generate(stdin: NodeJS.WritableStream) {
  let i = 0;
  const write = () => {
    let ok = true;
    while (i < COMMITS && ok) {
      const blob = randomBytes(BLOB_BYTES);
      const message = `commit ${i}\n`;
      const head = `commit refs/heads/main\nmark :${i + 1}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${message.length}\n${message}M 644 inline file-${i % 50}.bin\ndata ${blob.length}\n`;
      const tail = i % 500 === 499 ? `\nreset refs/tags/v${i + 1}\nfrom :${i + 1}\n\n` : '\n';
      ok = stdin.write(Buffer.concat([Buffer.from(head), blob, Buffer.from(tail)]));
      i++;
    }
    if (i < COMMITS) stdin.once('drain', write);
    else stdin.end();
  };
  write();
}

/** The bytes of a repository's packs (its objects/pack folder). */
export function packSize(dir: string): number {
  const packDir = path.join(dir, 'objects', 'pack');
  return fs.readdirSync(packDir).reduce((n, f) => n + fs.statSync(path.join(packDir, f)).size, 0);
}

/** Creates the benchmark repository as a packed bare repository at `dir`; returns its pack size in bytes. */
export async function generateRepository(dir: string): Promise<number> {
  await timedGit(['init', '-q', '--bare', dir], path.dirname(dir));
  await timedGit(['fast-import', '--quiet'], dir, generate);
  await timedGit(['repack', '-adq'], dir);
  return packSize(dir);
}

/**
 * Profiles this process's main thread while `run` runs, when BENCH_CPU_PROFILE names a
 * directory: the V8 CPU profile of that stretch alone is written there as `<name>.cpuprofile`.
 */
export async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return run();
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/** Runs per figure: BENCH_RUNS, 5 unless set. */
export const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);

/** The spread of a figure over the runs. */
export const spread = (xs: number[], digits = 0) => {
  const r = (x: number) => Number(x.toFixed(digits));
  return { min: r(Math.min(...xs)), max: r(Math.max(...xs)), runs: xs.map(r) };
};

/** The median of some timings. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The p-th percentile of some timings (nearest rank: of 20, the 99th is the largest). */
export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

/** A free loopback port (closed again before use, as git daemon binds it itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A fresh database: a SQLite file in `dir`, or a Postgres database `<prefix>_<random>` created on the server named; `drop` removes it. */
export async function freshDatabase(dir: string, server?: string, prefix = 'wharf_bench'): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!server) return { url: `sqlite:${path.join(dir, 'bench.sqlite')}`, drop: async () => {} };
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = knexLib({ client: 'pg', connection: server, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = knexLib({ client: 'pg', connection: server, pool: { min: 0, max: 1 } });
      await dropper.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.destroy();
    },
  };
}

/** A child process started by `child()`: its stdout so far, and its end. */
export interface Child {
  proc: ChildProcess;
  out: () => string;
  exited: Promise<unknown>;
}

/** Starts a process and resolves once its stdout matches `ready` (rejects if it exits first). */
export function child(cmd: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Child> {
  const proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  const exited = new Promise((resolve) => proc.on('close', resolve));
  return new Promise((resolve, reject) => {
    const check = setInterval(() => {
      if (ready.test(out)) {
        clearInterval(check);
        resolve({ proc, out: () => out, exited });
      }
      if (proc.exitCode !== null) {
        clearInterval(check);
        reject(new Error(`${cmd} exited: ${out}`));
      }
    }, 20);
  });
}

// A webhook receiver for a process of its own: answers 200 to every POST after reading its
// body; GET /stats reports the requests, body bytes, distinct X-Service-Delivery values,
// signatures that did not verify and the last arrival (epoch ms). With RECEIVER_SECRET set
// it checks each X-Service-Signature (sha256= + hex HMAC-SHA256 of the body keyed by the
// secret's UTF-8 bytes); with RECEIVER_DELAY_MS it answers each POST that long after
// reading it (a receiver with work to do); with RECEIVER_LINES=1 it prints a line per request:
// `r <arrival ms> <path> <event> <delivery> <after sha> <body bytes> <signature ok 1|0>`.
const RECEIVER = `
import http from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
const key = process.env.RECEIVER_SECRET ? Buffer.from(process.env.RECEIVER_SECRET, 'utf8') : null;
const lines = process.env.RECEIVER_LINES === '1';
const delay = Number(process.env.RECEIVER_DELAY_MS ?? 0);
let requests = 0, bytes = 0, bad = 0, first = 0, last = 0; const guids = new Set();
const server = http.createServer((req, res) => {
  if (req.method === 'GET') { res.end(JSON.stringify({ requests, bytes, guids: guids.size, bad_signatures: bad, first, last })); return; }
  const chunks = [];
  req.on('data', (c) => { bytes += c.length; chunks.push(c); });
  req.on('end', () => {
    const at = Date.now();
    const body = Buffer.concat(chunks);
    const guid = String(req.headers['x-service-delivery'] ?? '-');
    requests++; last = at; first ||= at; guids.add(guid);
    let ok = true;
    if (key) {
      const want = Buffer.from('sha256=' + createHmac('sha256', key).update(body).digest('hex'));
      const got = Buffer.from(String(req.headers['x-service-signature'] ?? ''));
      ok = got.length === want.length && timingSafeEqual(got, want);
      if (!ok) bad++;
    }
    if (lines) {
      const after = /"after":"([0-9a-f]{40})"/.exec(body.toString('latin1'))?.[1] ?? '-';
      process.stdout.write('r ' + at + ' ' + req.url + ' ' + (req.headers['x-service-event'] ?? '-') + ' ' + guid + ' ' + after + ' ' + body.length + ' ' + (ok ? 1 : 0) + '\\n');
    }
    if (delay > 0) setTimeout(() => res.end('ok'), delay);
    else res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

/** What the receiver's GET /stats answers. */
export interface ReceiverStats {
  requests: number;
  bytes: number;
  guids: number;
  bad_signatures: number;
  /** Epoch ms of the first and the last request read. */
  first: number;
  last: number;
}

/** Starts the receiver (RECEIVER_SECRET, RECEIVER_LINES in `env`); `url` is its origin. */
export async function startReceiver(env: NodeJS.ProcessEnv = {}): Promise<Child & { url: string; stats: () => Promise<ReceiverStats> }> {
  const rx = await child(process.execPath, ['--input-type=module', '-e', RECEIVER], { ...process.env, ...env }, /port \d+/);
  const url = `http://127.0.0.1:${/port (\d+)/.exec(rx.out())![1]}`;
  return { ...rx, url, stats: () => fetch(`${url}/stats`).then((r) => r.json() as Promise<ReceiverStats>) };
}

const BIN = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'bin', 'wharf.js');

/** The settings of a bench's Wharf: on a loopback port, its data under `dir`, delivering to loopback receivers, logging at info. */
export function wharfEnv(dir: string, databaseUrl: string): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOWED_HOSTS: 'loopback',
    LOG_LEVEL: 'info',
  };
}

/** A `wharf serve` child process: its URL, the admin token it printed, and a JSON API caller with that token. */
export interface WharfChild extends Child {
  url: string;
  token: string;
  api: <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;
}

/**
 * Starts `wharf serve` on a loopback port with its data under `dir` and `databaseUrl`; `env`
 * adds to or overrides the defaults. With BENCH_CPU_PROFILE=<dir> the server writes a V8 CPU
 * profile there when it stops (open it in Chrome's DevTools) — to see where a figure goes.
 */
export async function serveWharf(dir: string, databaseUrl: string, env: NodeJS.ProcessEnv = {}): Promise<WharfChild> {
  const profile = process.env.BENCH_CPU_PROFILE;
  const server = await child(
    process.execPath,
    [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), BIN, 'serve'],
    { ...process.env, ...wharfEnv(dir, databaseUrl), LOG_LEVEL: 'warn', ...env },
    /sign in with this token: wharf_\S+/,
  );
  const url = /listening on (http:\/\/\S+)/.exec(server.out())![1];
  const token = /sign in with this token: (wharf_\S+)/.exec(server.out())![1];
  const api = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
    const res = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return { ...server, url, token, api };
}

const discard = () => new Writable({ write: (_c, _e, cb) => cb() });

/** Wharf in this process on a database, delivering to loopback receivers (BENCH_LOG=1 shows its log); `env` adds settings. */
export async function wharfInProcess(dir: string, databaseUrl: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const config = loadConfig({ ...wharfEnv(dir, databaseUrl), ...env });
  return startServer(config, { logDestination: process.env.BENCH_LOG ? process.stderr : discard() });
}
