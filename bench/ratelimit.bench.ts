// Rate limit cost (SPEC §2): requests per second to an authenticated API GET
// (/api/v1/user) on a server with the limiter on (a quota never reached), as a
// ratio to the same server without it (RATE_LIMIT=off), on one database. Medians
// of alternating runs. SQLite always (counts in memory); Postgres too when
// BENCH_DATABASE_URL or TEST_DATABASE_URL names a server (counts in its table).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexLib from 'knex';
import type { Bench, Figure } from './run.ts';
import { loadConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';

const RUNS = 5;
const REQUESTS = 1000;
const CONCURRENCY = 8;

/** A database of the bench's own: a temporary SQLite file, or a Postgres database created and dropped. */
async function database(kind: 'sqlite' | 'postgres', dir: string, serverUrl?: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') return { url: `sqlite:${path.join(dir, 'bench.sqlite')}`, drop: async () => {} };
  const name = `wharf_bench_${randomBytes(5).toString('hex')}`;
  const admin = knexLib({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

/** Requests per second of REQUESTS GETs, CONCURRENCY at a time. */
async function rate(server: RunningServer, token: string): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next++ < REQUESTS) {
      const res = await fetch(`${server.url}/api/v1/user`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`GET /api/v1/user answered ${res.status}`);
      await res.arrayBuffer();
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return REQUESTS / ((performance.now() - t0) / 1000);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(kind: 'sqlite' | 'postgres', serverUrl?: string): Promise<Figure> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-rl-'));
  const db = await database(kind, dir, serverUrl);
  const env = { HOST: '127.0.0.1', PORT: '0', DATA_DIR: path.join(dir, 'data'), REPOS_DIR: path.join(dir, 'repos'), DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
  const off = await startServer(loadConfig({ ...env, RATE_LIMIT: 'off' }), { workers: [] });
  const on = await startServer(loadConfig({ ...env, RATE_LIMIT: '999999999/1h' }), { workers: [] });
  try {
    const token = off.bootstrap!.token;
    // Warm both (connections, prepared statements, JIT) before the clock.
    await rate(off, token);
    await rate(on, token);
    const without: number[] = [];
    const withLimit: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      without.push(await rate(off, token));
      withLimit.push(await rate(on, token));
    }
    const value = Math.round(median(withLimit));
    const baseline = Math.round(median(without));
    const ratio = Math.round((value / baseline) * 100) / 100;
    return {
      figure: `authenticated API GET with the rate limit, requests per second (${RUNS} runs of ${REQUESTS}, ${CONCURRENCY} at a time), ${kind}`,
      value,
      unit: 'requests/s',
      baseline,
      ratio,
      target: '≥ 0.8 of the same server with RATE_LIMIT=off',
      met: ratio >= 0.8,
      runs_with: withLimit.map(Math.round),
      runs_without: without.map(Math.round),
    };
  } finally {
    await on.stop();
    await off.stop();
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const bench: Bench = async (report) => {
  report(await measure('sqlite'));
  const pg = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (pg) report(await measure('postgres', pg));
};

export default bench;
