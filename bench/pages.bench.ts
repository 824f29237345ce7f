// Pages figure of SPEC §13: the repository pages of a libgit2-shaped repository (20,000
// commits, 7,000 refs; bench/pagesRepo.ts) answer in p95 ≤ 150 ms, and the server's memory
// stays flat over 1,000 requests. The repository is generated once per run by
// `git fast-import` and pushed (`git push --mirror`, as a team moving in would) into a real
// `wharf serve` on loopback (SQLite; Postgres too when BENCH_DATABASE_URL or
// TEST_DATABASE_URL names a server), public, so the same pages are timed signed in (a
// session cookie from the sign-in form) and anonymous, one request at a time and 4 side by
// side. Each page's baseline is the git it cannot do without (ls-tree, cat-file, log, show,
// for-each-ref) run as commands on the same repository in the same run: the real limit,
// printed as the ratio page/git. BENCH_PAGES_REQUESTS (200) requests a page and way, in
// BENCH_RUNS (5) rounds that go through every page in turn, so drift falls on all of them;
// p50 and p95 are over all the requests, the spread over the rounds' p95s.
// A page that does not answer 200 on its warm-up is reported as missing with its status.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type Db } from '../src/db/connect.ts';
import { repoDir } from '../src/git/bare.ts';
import type { Bench, Figure } from './run.ts';
import { freshDatabase, percentile, RUNS, serveWharf, spread, timedGit, type WharfChild } from './fixtures.ts';
import { rssMb, sideBySide, signInCookie, timedGet, timedGitCommands } from './pagesLoad.ts';
import { generatePagesRepo, PAGES_COUNTS, type PagesRepo } from './pagesRepo.ts';

const ORG = 'bench';
const REPO = 'libgit2';
/** What the page addresses point at in the generated repository. */
interface Target extends PagesRepo {
  sha: string;
}
/** A page: its address under /<org>/<repo>, and the git commands it stands on (its baseline). */
interface PageSpec {
  page: string;
  path: string;
  git: string[][];
}

// The pages timed, in one list to adjust as they land (the commit log pages 50 commits a page).
const PAGES = (t: Target): PageSpec[] => [
  {
    page: 'repository',
    path: '',
    git: [
      ['ls-tree', 'main'],
      ['cat-file', 'blob', 'main:README.md'],
    ],
  },
  { page: 'tree', path: `/tree/main/${t.folder}`, git: [['ls-tree', `main:${t.folder}`]] },
  { page: 'blob', path: `/blob/main/${t.file}`, git: [['cat-file', 'blob', `main:${t.file}`]] },
  { page: 'commits', path: '/commits/main', git: [['log', '-n', '50', 'main']] },
  { page: 'commits page 50', path: '/commits/main?page=50', git: [['log', '-n', '50', '--skip', '2450', 'main']] },
  { page: 'commit', path: `/commit/${t.sha}`, git: [['show', t.sha]] },
  { page: 'branches', path: '/branches', git: [['for-each-ref', 'refs/heads']] },
  { page: 'tags', path: '/tags', git: [['for-each-ref', 'refs/tags']] },
];

const REQUESTS = Math.max(RUNS, Number(process.env.BENCH_PAGES_REQUESTS ?? 200) || 200);
const PER_ROUND = Math.ceil(REQUESTS / RUNS);
const WARM_UP = 10;
const CONCURRENCY = [1, 4];
const TARGET_P95_MS = 150;
const MEMORY_REQUESTS = Math.max(4, Number(process.env.BENCH_PAGES_MEMORY_REQUESTS ?? 1000) || 1000);
/** RSS growth over MEMORY_REQUESTS below this counts as flat: a leak of 20 KB a request would pass it. */
const FLAT_MB = 20;
/**
 * The repository comes in by `git push --mirror` (30–50 s with its recording, minutes
 * on a busy machine), so the pages read it as a push leaves it (loose refs, the pack as
 * received). BENCH_PAGES_PLACE=1 copies the pack and packed refs into the repository made
 * through the API instead, in well under a second.
 */
const PUSH = process.env.BENCH_PAGES_PLACE !== '1';
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;

type Viewer = { viewer: 'signed in' | 'anonymous'; cookie?: string };
/** Timings of one page, seen one way, at one concurrency: every request, and each round's p95. */
interface Timings {
  ms: number[];
  roundP95: number[];
  errors: number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Waits until Wharf has recorded every push (no push record left); returns how long that took in ms. */
async function untilRecorded(db: Db, wharf: WharfChild): Promise<number> {
  const started = performance.now();
  while (Number(((await db('push_records').count({ n: '*' })) as any[])[0].n) > 0) {
    if (wharf.proc.exitCode !== null) throw new Error('wharf serve exited while recording the push');
    await new Promise((r) => setTimeout(r, 50));
  }
  return performance.now() - started;
}

/** Times one page (or its git) PER_ROUND times at a concurrency, adding to `into`. */
async function timeRound(into: Timings, concurrency: number, one: () => Promise<{ status: number; ms: number }>) {
  const results = await sideBySide(PER_ROUND, concurrency, one);
  into.errors += results.filter((r) => r.status !== 200).length;
  const ms = results.map((r) => r.ms);
  into.ms.push(...ms);
  into.roundP95.push(percentile(ms, 95));
}

/** Reports a figure per page, way and concurrency, and writes the same as a table to stderr. */
function reportPages(
  pages: PageSpec[],
  viewers: Viewer[],
  status: Map<string, number>,
  times: Map<string, Timings>,
  label: string,
  report: (f: Figure) => void,
) {
  const rows: string[] = [];
  for (const p of pages)
    for (const c of CONCURRENCY) {
      const git = times.get(`${p.page}|git|${c}`)!;
      const gitP50 = percentile(git.ms, 50);
      const gitP95 = percentile(git.ms, 95);
      const cells: string[] = [];
      for (const v of viewers) {
        const s = status.get(`${p.page}|${v.viewer}`)!;
        const common = { url: `/${ORG}/${REPO}${p.path}`, viewer: v.viewer, concurrency: c, git: p.git.map((g) => `git ${g.join(' ')}`).join('; ') };
        const figure = `pages ${label}: ${p.page} (${v.viewer}, ${c} at a time)`;
        if (s !== 200) {
          report({ figure, value: NaN, unit: 'ms', target: `p95 ≤ ${TARGET_P95_MS} ms`, met: false, result: `missing (${s})`, ...common });
          cells.push(`missing (${s})`.padEnd(22));
          continue;
        }
        const t = times.get(`${p.page}|${v.viewer}|${c}`)!;
        const p50 = percentile(t.ms, 50);
        const p95 = percentile(t.ms, 95);
        const met = p95 <= TARGET_P95_MS && t.errors === 0;
        const result = t.errors ? `fail (${t.errors} not 200)` : met ? 'pass' : 'fail';
        report({
          figure,
          value: round1(p95),
          unit: 'ms',
          p50: round1(p50),
          p95: round1(p95),
          baseline: round1(gitP50),
          baseline_p95: round1(gitP95),
          ratio: round1(p50 / gitP50),
          ratio_p95: round1(p95 / gitP95),
          target: `p95 ≤ ${TARGET_P95_MS} ms`,
          met,
          result,
          requests: t.ms.length,
          p95_rounds: spread(t.roundP95, 1),
          ...common,
          note: 'value: p95 over all requests; baseline: p50 of the git commands the page stands on, run the same way; ratio: page p50 / git p50',
        });
        cells.push(`${round1(p50)}/${round1(p95)} ${result} ×${round1(p50 / gitP50)}`.padEnd(22));
      }
      rows.push(`${`${p.page} (${c})`.padEnd(20)} ${cells.join(' ')} ${round1(gitP50)}/${round1(gitP95)}`);
    }
  const head = `${'page (at a time)'.padEnd(20)} ${viewers.map((v) => v.viewer.padEnd(22)).join(' ')} git`;
  process.stderr.write(`pages ${label}: p50/p95 ms (target p95 ≤ ${TARGET_P95_MS} ms), ×: page p50 / git p50\n${head}\n${rows.join('\n')}\n`);
}

/** Times every page, way and concurrency and the git baselines, and reports them; returns the page|viewer keys that answer 200. */
async function measurePages(wharf: WharfChild, dir: string, pages: PageSpec[], viewers: Viewer[], label: string, report: (f: Figure) => void) {
  const base = `${wharf.url}/${ORG}/${REPO}`;
  // Warm-up, which also tells which pages exist yet.
  const status = new Map<string, number>();
  for (const p of pages) {
    for (const v of viewers)
      for (let i = 0; i < WARM_UP; i++) {
        const { status: s } = await timedGet(base + p.path, v.cookie);
        if (s !== 200 || i === 0) status.set(`${p.page}|${v.viewer}`, s);
      }
    for (let i = 0; i < 3; i++) await timedGitCommands(dir, p.git);
  }
  const times = new Map<string, Timings>();
  const timings = (key: string) => times.get(key) ?? times.set(key, { ms: [], roundP95: [], errors: 0 }).get(key)!;
  for (let r = 0; r < RUNS; r++) {
    for (const c of CONCURRENCY)
      for (const p of pages) {
        await timeRound(timings(`${p.page}|git|${c}`), c, async () => ({ status: 200, ms: await timedGitCommands(dir, p.git) }));
        for (const v of viewers)
          if (status.get(`${p.page}|${v.viewer}`) === 200) await timeRound(timings(`${p.page}|${v.viewer}|${c}`), c, () => timedGet(base + p.path, v.cookie));
      }
    process.stderr.write(`pages ${label}: round ${r + 1}/${RUNS} done\n`);
  }
  reportPages(pages, viewers, status, times, label, report);
  return [...status].filter(([, s]) => s === 200).map(([key]) => key);
}

/** The server's RSS after a warm-up and after MEMORY_REQUESTS requests over every page that answers, 4 at a time. */
async function measureMemory(wharf: WharfChild, pages: PageSpec[], viewers: Viewer[], live: string[], label: string, report: (f: Figure) => void) {
  const mix = live.map((key) => {
    const [page, viewer] = key.split('|');
    return { url: `${wharf.url}/${ORG}/${REPO}${pages.find((p) => p.page === page)!.path}`, cookie: viewers.find((v) => v.viewer === viewer)!.cookie };
  });
  const request = (i: number) => timedGet(mix[i % mix.length].url, mix[i % mix.length].cookie);
  const settle = () => new Promise((r) => setTimeout(r, 1000));
  await sideBySide(100, 4, request);
  await settle();
  const before = rssMb(wharf.proc.pid!);
  // Sampled along the way too, so a plateau reached early reads apart from a steady climb.
  const samples: number[] = [];
  let notOk = 0;
  for (let done = 0; done < MEMORY_REQUESTS; done += Math.ceil(MEMORY_REQUESTS / 4)) {
    notOk += (await sideBySide(Math.ceil(MEMORY_REQUESTS / 4), 4, (i) => request(done + i))).filter((r) => r.status !== 200).length;
    samples.push(round1(rssMb(wharf.proc.pid!)));
  }
  await settle();
  const after = rssMb(wharf.proc.pid!);
  const growth = after - before;
  report({
    figure: `pages ${label}: server RSS growth over ${MEMORY_REQUESTS} requests`,
    value: round1(growth),
    unit: 'MB',
    rss_after_warm_up_mb: round1(before),
    rss_after_requests_mb: round1(after),
    rss_each_quarter_mb: samples,
    pages_in_the_mix: live,
    not_200: notOk,
    target: `flat: growth < ${FLAT_MB} MB`,
    met: growth < FLAT_MB,
    result: growth < FLAT_MB ? 'flat' : 'grew',
  });
}

/**
 * Puts the generated repository's pack and packed refs into the (empty) repository Wharf
 * made through the API: the same objects and refs as a push, without the push (see PUSH).
 */
function placeRepository(src: string, dest: string) {
  const packs = path.join(src, 'objects', 'pack');
  for (const f of fs.readdirSync(packs)) fs.copyFileSync(path.join(packs, f), path.join(dest, 'objects', 'pack', f));
  fs.copyFileSync(path.join(src, 'packed-refs'), path.join(dest, 'packed-refs'));
}

/** One database's run: a fresh server, the push, the pages and the memory. */
async function runOn(dir: string, src: string, target: Target, label: string, databaseServer: string | undefined, report: (f: Figure) => void) {
  const runDir = path.join(dir, label);
  fs.mkdirSync(runDir);
  const database = await freshDatabase(runDir, databaseServer, 'wharf_bench_pages');
  const wharf = await serveWharf(runDir, database.url);
  const db = connect(database.url);
  try {
    await wharf.api('POST', '/api/v1/orgs', { name: ORG });
    await wharf.api('POST', `/api/v1/orgs/${ORG}/repos`, { name: REPO, visibility: 'public' });
    const dest = repoDir(path.join(runDir, 'repos'), ORG, REPO);
    if (PUSH) {
      const pushMs = await timedGit(['push', '-q', '--mirror', `${wharf.url.replace('http://', `http://x:${wharf.token}@`)}/${ORG}/${REPO}.git`], src);
      const recordedMs = await untilRecorded(db, wharf);
      process.stderr.write(
        `pages ${label}: git push --mirror of ${PAGES_COUNTS.refs} refs took ${Math.round(pushMs)} ms, recording it ${Math.round(recordedMs)} ms more\n`,
      );
    } else {
      const started = performance.now();
      placeRepository(src, dest);
      process.stderr.write(
        `pages ${label}: placed the pack and ${PAGES_COUNTS.refs} refs into the repository made through the API in ${Math.round(performance.now() - started)} ms\n`,
      );
    }
    const viewers: Viewer[] = [{ viewer: 'signed in', cookie: await signInCookie(wharf.url, wharf.token) }, { viewer: 'anonymous' }];
    const pages = PAGES(target);
    const live = await measurePages(wharf, dest, pages, viewers, label, report);
    await measureMemory(wharf, pages, viewers, live, label, report);
  } catch (err) {
    throw new Error(`${label}: ${(err as Error).message}\nwharf serve logged:\n${wharf.out().slice(-4000)}`, { cause: err });
  } finally {
    await db.destroy();
    wharf.proc.kill('SIGKILL');
    await wharf.exited;
    await database.drop();
  }
}

/** The generated repository: made in `dir`, or reused from BENCH_PAGES_KEEP when an earlier run left it there. */
async function sourceRepository(dir: string): Promise<{ src: string; target: Target }> {
  const keep = process.env.BENCH_PAGES_KEEP;
  const src = path.join(keep || dir, 'src.git');
  const ready = path.join(keep || dir, 'ready.json');
  if (keep && fs.existsSync(ready)) {
    process.stderr.write(`pages: reusing the repository generated in ${keep}\n`);
    return { src, target: JSON.parse(fs.readFileSync(ready, 'utf8')) };
  }
  if (keep) fs.rmSync(keep, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(src), { recursive: true });
  const repo = await generatePagesRepo(src);
  // A commit well inside the history, as a link from the log would lead to.
  const sha = execFileSync('git', ['rev-parse', 'main~100'], { cwd: src, encoding: 'utf8' }).trim();
  process.stderr.write(
    `pages: generated ${PAGES_COUNTS.commits} commits, ${PAGES_COUNTS.refs} refs, ${round1(repo.packBytes / 1e6)} MB packed: ` +
      `fast-import ${Math.round(repo.fastImportMs)} ms, repack ${Math.round(repo.repackMs)} ms; tree ${repo.folder}, blob ${repo.file} (${Math.round(repo.fileBytes / 1024)} KB), commit ${sha}\n`,
  );
  const target: Target = { folder: repo.folder, file: repo.file, fileBytes: repo.fileBytes, packBytes: repo.packBytes, sha };
  fs.writeFileSync(ready, JSON.stringify(target));
  return { src, target };
}

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-pages-'));
  try {
    const { src, target } = await sourceRepository(dir);
    await runOn(dir, src, target, 'sqlite', undefined, report);
    if (postgresServer) await runOn(dir, src, target, 'postgres', postgresServer, report);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
