// Recording a libgit2-sized mirror push: a generated repository of 20,000+ commits,
// 100 branches, 300 tags and 4,600+ refs/pull/* pushed with `git push --mirror` to a
// real `wharf serve` (SQLite, and Postgres when BENCH_DATABASE_URL or TEST_DATABASE_URL
// is set) with a push webhook whose receiver runs in a process of its own. Figures: time
// from the push's end to the last delivery, peak RSS above idle, worst GET /api/v1/health
// latency while recording (the server's event-loop probe), bytes stored in events and
// bytes delivered.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from '../src/db/connect.ts';
import type { Bench } from './run.ts';
import { freshDatabase, serveWharf, startReceiver, timedGit } from './fixtures.ts';
import { generateShapedRepo, shapeCounts } from '../test/git/bigRepo.ts';

// BIGPUSH_SCALE (0–1) shrinks the main line and the pull refs for a quick look; the figures are for 1.
const SCALE = Math.min(1, Number(process.env.BIGPUSH_SCALE ?? 1) || 1);
const SHAPE = { mainCommits: Math.round(18_000 * SCALE), branches: 100, tags: 300, pulls: Math.round(6_000 * SCALE) };

const rssKb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function runOnce(dir: string, src: string, databaseUrl: string, label: string, report: Parameters<Bench>[0]): Promise<void> {
  const receiver = await startReceiver();
  const rxUrl = receiver.url;
  const server = await serveWharf(path.join(dir, label), databaseUrl);
  const { url, token, api } = server;
  const db = connect(databaseUrl);
  try {
    await api('POST', '/api/v1/orgs', { name: 'bench' });
    await api('POST', '/api/v1/orgs/bench/repos', { name: 'libgit2' });
    await api('POST', '/api/v1/repos/bench/libgit2/webhooks', { url: `${rxUrl}/push`, events: ['push'] });
    await new Promise((r) => setTimeout(r, 1000));
    const idleKb = rssKb(server.proc.pid!, 'VmRSS');
    let worstHealth = 0;
    let recording = false;
    let probing = true;
    const probe = (async () => {
      while (probing && server.proc.exitCode === null) {
        const t0 = performance.now();
        await fetch(`${url}/api/v1/health`)
          .then((r) => r.arrayBuffer())
          .catch(() => undefined);
        if (recording) worstHealth = Math.max(worstHealth, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const pushMs = await timedGit(['push', '-q', '--mirror', `${url.replace('http://', `http://x:${token}@`)}/bench/libgit2.git`], src);
    const pushedAt = Date.now();
    recording = true;
    // Done when the receiver has every push event the database holds and nothing is left to record.
    const stats = receiver.stats;
    const hasTable = await db.schema.hasTable('push_records');
    let last = { events: -1, since: Date.now() };
    let died = false;
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      if (server.proc.exitCode !== null) {
        died = true;
        break;
      }
      const events = Number(((await db('events').where('type', 'push').count({ n: '*' })) as any[])[0].n);
      const waiting = hasTable ? Number(((await db('push_records').count({ n: '*' })) as any[])[0].n) : 0;
      if (events !== last.events) last = { events, since: Date.now() };
      const s = await stats();
      if (events > 0 && waiting === 0 && s.guids >= events && Date.now() - last.since > 2000) break;
      if (Date.now() - pushedAt > 240_000) break;
    }
    probing = false;
    await probe;
    const s = await stats();
    const peakKb = died ? NaN : rssKb(server.proc.pid!, 'VmHWM');
    const stored = (await db('events')
      .where('type', 'push')
      .sum({ n: db.raw(databaseUrl.startsWith('sqlite:') ? 'length(payload)' : 'octet_length(payload)') })
      .first()) as any;
    const events = Number(((await db('events').where('type', 'push').count({ n: '*' })) as any[])[0].n);
    report({
      figure: `bigpush on ${label}: push end to last delivery`,
      value: died ? -1 : Math.max(0, s.last - pushedAt),
      unit: 'ms',
      target: 'first deliveries before the push is recorded; no stall',
      met: !died && worstHealth < 200,
      died,
      git_push_ms: Math.round(pushMs),
      events,
      deliveries_received: s.guids,
      peak_rss_above_idle_mb: Math.round((peakKb - idleKb) / 1024),
      worst_health_ms_while_recording: Math.round(worstHealth),
      event_bytes_stored: Number(stored?.n ?? 0),
      bytes_delivered: s.bytes,
    });
  } finally {
    await db.destroy();
    server.proc.kill('SIGKILL');
    receiver.proc.kill('SIGKILL');
    await Promise.all([server.exited, receiver.exited]);
  }
}

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-bigpush-'));
  try {
    const src = path.join(dir, 'src.git');
    const started = performance.now();
    await generateShapedRepo(src, SHAPE);
    process.stderr.write(`generated ${JSON.stringify(shapeCounts(SHAPE))} in ${Math.round(performance.now() - started)} ms\n`);
    await runOnce(dir, src, `sqlite:${path.join(dir, 'bench.sqlite')}`, 'sqlite', report);
    const pg = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
    if (pg) {
      const database = await freshDatabase(dir, pg, 'wharf_bench_bigpush');
      try {
        await runOnce(dir, src, database.url, 'postgres', report);
      } finally {
        await database.drop();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
