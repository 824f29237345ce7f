// Bulk issue import (SPEC §13): issues per second over 10 requests of 10,000 through
// the API, as a ratio to a bare Knex batch insert of the same rows (the issues and
// their label links) in the same run. SQLite always; Postgres too when
// BENCH_DATABASE_URL or TEST_DATABASE_URL names a server. The median ratio of BENCH_RUNS
// (5) runs, each on a fresh database and server, with its spread.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexLib, { type Knex } from 'knex';
import type { Bench, Figure } from './run.ts';
import { median, RUNS, spread } from './fixtures.ts';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { findOrg } from '../src/domain/accounts.ts';
import { createRepository } from '../src/domain/repos.ts';

const REQUESTS = 10;
const PER_REQUEST = 10_000;
const LABELS = ['bug', 'enhancement', 'question', 'docs', 'imported'];
// Knex renders a multi-row insert on SQLite as SELECT … UNION ALL, capped at 500 terms.
const SQLITE_CHUNK = 500;
const PG_CHUNK = 1000;

/** The records of one request: realistic sizes, one or two labels, an assignee, a third closed. */
function records(offset: number) {
  return Array.from({ length: PER_REQUEST }, (_, i) => {
    const number = offset + i + 1;
    return {
      number,
      title: `Imported issue ${number}: something does not work as expected`,
      body: `Steps to reproduce for ${number}.\n\n1. Open the page\n2. Click the button\n3. See the error\n\nExpected: it works. Actual: it does not.`.repeat(
        2,
      ),
      labels: number % 4 ? [LABELS[number % 4]] : [LABELS[number % 4], 'imported'],
      assignees: [`user${number % 50}`],
      state: number % 3 ? 'open' : 'closed',
      created_at: new Date(1_600_000_000_000 + number * 60_000).toISOString(),
    };
  });
}

type Record = ReturnType<typeof records>[number];

/** The bare baseline: the same issue rows and label links, by knex.batchInsert, one transaction per 10,000. */
async function bareInsert(db: Knex, repositoryId: number, authorId: number, batch: Record[], labelIds: Map<string, number>, chunk: number) {
  await db.transaction(async (trx) => {
    const now = Date.now();
    const rows = batch.map((r) => {
      const createdAt = Date.parse(r.created_at);
      const closedAt = r.state === 'closed' ? now : null;
      return {
        repository_id: repositoryId,
        number: r.number,
        kind: 'issue',
        title: r.title,
        body: r.body,
        state: r.state,
        assignees: JSON.stringify(r.assignees),
        author_id: authorId,
        created_at: createdAt,
        updated_at: Math.max(createdAt, closedAt ?? 0),
        closed_at: closedAt,
      };
    });
    // Knex's types reject a column list here although it passes one through at run time.
    const ids = (await trx.batchInsert('issues', rows, chunk).returning(['id', 'number'] as unknown as never)) as unknown as { id: number; number: number }[];
    const idOf = new Map(ids.map((r) => [Number(r.number), Number(r.id)]));
    const links = batch.flatMap((r) => r.labels.map((name) => ({ issue_id: idOf.get(r.number)!, label_id: labelIds.get(name)! })));
    await trx.batchInsert('issue_labels', links, chunk);
  });
}

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

/** One run's rates (issues per second) through the API and by the bare insert. */
interface Run {
  value: number;
  baseline: number;
}

async function measure(kind: 'sqlite' | 'postgres', serverUrl?: string): Promise<Run> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-bulk-'));
  const db = await database(kind, dir, serverUrl);
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: db.url,
    LOG_LEVEL: 'silent',
  });
  const server = await startServer(config, { workers: [] });
  try {
    const knex = server.services.db;
    const org = (await findOrg(knex, 'demo'))!;
    await createRepository({ ...server.services, db: knex }, { org, name: 'api' });
    const bareRepo = await createRepository({ ...server.services, db: knex }, { org, name: 'bare' });
    const admin = await knex('users').where('login', 'admin').first('id');
    await knex('labels').insert(LABELS.map((name) => ({ repository_id: bareRepo.id, name })));
    const labelIds = new Map<string, number>(
      (await knex('labels').where('repository_id', bareRepo.id).select('id', 'name')).map((r: any) => [r.name, Number(r.id)]),
    );
    const batches = Array.from({ length: REQUESTS }, (_, i) => records(i * PER_REQUEST));
    // The client's serialization is not the server's work: bodies are ready before the clock starts.
    const bodies = batches.map((issues) => JSON.stringify({ issues }));
    const post = async (body: string) => {
      const res = await fetch(`${server.url}/api/v1/repos/demo/api/issues/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.bootstrap!.token}`, 'content-type': 'application/json' },
        body,
      });
      if (res.status !== 200) throw new Error(`bulk import answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };

    const chunk = kind === 'sqlite' ? SQLITE_CHUNK : PG_CHUNK;
    let bareMs = 0;
    let apiMs = 0;
    // Alternating keeps both sides on an equally full database.
    for (let i = 0; i < REQUESTS; i++) {
      let t0 = performance.now();
      await bareInsert(knex, bareRepo.id, Number(admin.id), batches[i], labelIds, chunk);
      bareMs += performance.now() - t0;
      t0 = performance.now();
      await post(bodies[i]);
      apiMs += performance.now() - t0;
    }
    const total = REQUESTS * PER_REQUEST;
    return { value: total / (apiMs / 1000), baseline: total / (bareMs / 1000) };
  } finally {
    await server.stop();
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The figure of one dialect: the median run by ratio, with the spread of the ratios. */
async function figure(kind: 'sqlite' | 'postgres', serverUrl?: string): Promise<Figure> {
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await measure(kind, serverUrl));
  const ratios = runs.map((r) => r.value / r.baseline);
  const m = runs[ratios.indexOf(median(ratios))];
  const ratio = Math.round((m.value / m.baseline) * 100) / 100;
  return {
    figure: `bulk issue import, issues per second (${REQUESTS} × ${PER_REQUEST.toLocaleString('en')}), ${kind}`,
    value: Math.round(m.value),
    unit: 'issues/s',
    baseline: Math.round(m.baseline),
    ratio,
    target: '≥ 0.8 of a bare Knex batchInsert of the same rows',
    met: ratio >= 0.8,
    ratio_spread: spread(ratios, 2),
    body_mib: Math.round((JSON.stringify({ issues: records(0) }).length / 1024 / 1024) * 10) / 10,
    baseline_chunk: kind === 'sqlite' ? SQLITE_CHUNK : PG_CHUNK,
    note: `median of ${RUNS} runs by ratio, each a fresh database and server`,
  };
}

const bench: Bench = async (report) => {
  report(await figure('sqlite'));
  const pg = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (pg) report(await figure('postgres', pg));
};

export default bench;
