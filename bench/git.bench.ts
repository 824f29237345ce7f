// Git figure of SPEC §13: `git push --mirror` and `git clone --mirror` through Wharf, each
// as a ratio to the same operation against bare `git http-backend` (bench/gitBackend.ts:
// the CGI behind the least HTTP server that runs it, no authentication, repositories with
// http.receivepack and receive.fsckObjects on, as Wharf checks every pushed object too),
// target ≤ 1.1×. Wharf's side authenticates as git does (a 401, then the token). The same
// operation against a file:// repository (receive.fsckObjects on too) is printed beside it
// as information: it is what git costs with no HTTP at all.
//
// Three repositories (bench/gitShapes.ts, built by `git fast-import`):
//  a. 5,000 commits of 10 KiB random blobs, ~53 MB, main and 10 tags (fixtures.ts);
//  b. 8,000 small commits: main, 40 branches with commits of their own, 300 annotated tags;
//  c. shaped like libgit2's GitHub mirror: 20,000 commits, 100 branches, 300 annotated tags
//     and 4,600 refs/pull/<n>/head (3,000 with a commit of their own).
// Per shape, BENCH_RUNS (5) paired runs: each pushes into a fresh empty repository on both
// servers (Wharf's made by push to create), the side going first alternating run by run,
// then clones what was pushed. Wharf records the push's events in the background after
// `git push` returns; the bench waits for that (no push record left) before the next
// timing and prints that wait as `recorded_ms`, apart from the push. Every repository and
// clone stays until the end (some 2.5 GB a database at 5 runs).
//
// Wharf runs as `wharf serve`, a process of its own, as does the baseline server: neither
// shares an event loop with this harness (which polls Wharf's database while it records),
// and both sides pay the same for being a separate Node process. SQLite; Postgres too when
// BENCH_DATABASE_URL or TEST_DATABASE_URL names a server. BENCH_GIT_SHAPES=a,c picks shapes;
// BENCH_GIT_REPO=<bare repository> adds a real one, shape `repo`.
//
// Over HTTP, git 2.39's `push --mirror` goes through the remote helper, which hands
// send-pack one refspec per ref; the client's time before the first pack byte then grows
// with the square of the refs (a mirror push of 1,000 refs to one empty commit took 0.6 s,
// of 4,000 refs 7 s, to the baseline server here): some 6 s of each shape c push, on
// either server, that file:// does not pay.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type Db } from '../src/db/connect.ts';
import type { Bench, Figure } from './run.ts';
import { child, COMMITS, freshDatabase, generateRepository, median, packSize, RUNS, serveWharf, timedGit, type Child, type WharfChild } from './fixtures.ts';
import { GIT_BACKEND_SCRIPT } from './gitBackend.ts';
import { baselineRepository, generateShape, SHAPE_B, SHAPE_C, shapeCommits, shapeRefs, type Shape } from './gitShapes.ts';

const TARGET = 1.1;
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;
/** Waiting for Wharf to record a push fails after this long. */
const RECORD_LIMIT_MS = 600_000;

type Dialect = 'sqlite' | 'postgres';
type Side = 'wharf' | 'backend';

/** One repository to measure with: how to build it, and what it holds. */
interface Case {
  key: string;
  build: (dir: string) => Promise<number>;
  commits: number;
  refs: number;
  describe: string;
}

const shaped = (key: string, shape: Shape, describe: string): Case => ({
  key,
  build: (dir) => generateShape(dir, shape),
  commits: shapeCommits(shape),
  refs: shapeRefs(shape),
  describe,
});

const CASES: Case[] = [
  {
    key: 'a',
    build: generateRepository,
    commits: COMMITS,
    refs: 1 + COMMITS / 500,
    describe: `${COMMITS} commits of 10 KiB random files, main and ${COMMITS / 500} tags`,
  },
  shaped('b', SHAPE_B, '8,000 small commits, 40 branches, 300 annotated tags'),
  shaped('c', SHAPE_C, 'libgit2-shaped: 20,000 small commits, 100 branches, 300 annotated tags, 4,600 refs/pull/<n>/head'),
  ...(process.env.BENCH_GIT_REPO ? [realRepository(process.env.BENCH_GIT_REPO)] : []),
].filter((c) => !process.env.BENCH_GIT_SHAPES || process.env.BENCH_GIT_SHAPES.split(',').includes(c.key));

/**
 * BENCH_GIT_REPO=<a bare repository>: a real one as the fourth case, `repo` (a mirror of a
 * public project, say, brought by `git clone --mirror`; never committed). It is copied by a
 * local `git clone --mirror` and measured as the shapes are.
 */
function realRepository(source: string): Case {
  const read = (args: string[]) => execFileSync('git', args, { cwd: source, encoding: 'utf8' }).trim();
  return {
    key: 'repo',
    build: async (dir) => {
      await timedGit(['clone', '-q', '--mirror', path.resolve(source), dir], path.dirname(dir));
      return packSize(dir);
    },
    commits: Number(read(['rev-list', '--count', '--all'])),
    refs: read(['for-each-ref', '--format=%(refname)']).split('\n').filter(Boolean).length,
    describe: `the repository at ${path.resolve(source)} (BENCH_GIT_REPO)`,
  };
}

/** Times of one shape's runs: per operation and side, in run order. */
interface Times {
  push: Record<Side | 'file', number[]>;
  clone: Record<Side | 'file', number[]>;
  recorded: number[];
}

/** Waits until Wharf has no push record left (every push's events recorded); returns how long that took in ms. */
async function untilRecorded(db: Db, wharf: WharfChild): Promise<number> {
  const started = performance.now();
  for (;;) {
    const left = Number(((await db('push_records').count({ n: '*' })) as any[])[0].n);
    if (left === 0) return performance.now() - started;
    if (wharf.proc.exitCode !== null) throw new Error('wharf serve exited while recording a push');
    if (performance.now() - started > RECORD_LIMIT_MS) throw new Error(`a push was not recorded within ${RECORD_LIMIT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The two servers of a dialect's runs, and a repository's URL on either (Wharf's carries the admin token). */
interface Servers {
  wharf: WharfChild;
  db: Db;
  backendRoot: string;
  url: (side: Side, name: string) => string;
}

/** One shape's runs against both servers. */
async function measure(dir: string, src: string, c: Case, servers: Servers, dialect: Dialect): Promise<Times> {
  const times: Times = { push: { wharf: [], backend: [], file: [] }, clone: { wharf: [], backend: [], file: [] }, recorded: [] };
  for (let run = 0; run < RUNS; run++) {
    const name = `${c.key}-${dialect}-${run}`;
    const fileRepo = path.join(dir, 'file', `${name}.git`);
    // Each side's empty repository exists before the timing: the backend's by git init,
    // Wharf's through its API, as a user creates one and then pushes (a push to a name that
    // does not exist yet creates it too, inside the push's own time).
    await baselineRepository(path.join(servers.backendRoot, `${name}.git`));
    await servers.wharf.api('POST', '/api/v1/orgs/demo/repos', { name });
    await baselineRepository(fileRepo);
    // The side that goes first alternates, so drift over a run (disk writeback, other load) falls on both.
    const order: Side[] = run % 2 === 0 ? ['backend', 'wharf'] : ['wharf', 'backend'];
    for (const side of order) {
      times.push[side].push(await timedGit(['push', '-q', '--mirror', servers.url(side, name)], src));
      // Wharf records the push's events in the background once it returns: not in the push's
      // time, but finished before the next timing so it does not share the machine with it.
      if (side === 'wharf') times.recorded.push(await untilRecorded(servers.db, servers.wharf));
    }
    times.push.file.push(await timedGit(['push', '-q', '--mirror', `file://${fileRepo}`], src));
    const clones = path.join(dir, 'clones');
    for (const side of order)
      times.clone[side].push(await timedGit(['clone', '-q', '--mirror', servers.url(side, name), path.join(clones, `${side}-${name}`)], dir));
    times.clone.file.push(await timedGit(['clone', '-q', '--mirror', `file://${fileRepo}`, path.join(clones, `file-${name}`)], dir));
    // Nothing is removed until the bench ends: on ext4, files created where many were just
    // deleted wait on the inode allocator (`recently_deleted`), which slowed the ref updates
    // of whichever side's repositories sat beside removed ones (341 refs: 22 → 100–300 ms).
    const last = (xs: number[]) => Math.round(xs.at(-1)!);
    process.stderr.write(
      `git ${c.key} ${dialect} run ${run + 1}/${RUNS}: push wharf ${last(times.push.wharf)} ms, http-backend ${last(times.push.backend)} ms, file ${last(times.push.file)} ms, ` +
        `recorded ${last(times.recorded)} ms; clone wharf ${last(times.clone.wharf)} ms, http-backend ${last(times.clone.backend)} ms, file ${last(times.clone.file)} ms\n`,
    );
  }
  return times;
}

const round = (x: number, digits = 0) => Number(x.toFixed(digits));

/** The figures of one shape on one dialect. */
function figures(c: Case, packBytes: number, dialect: Dialect, times: Times): Figure[] {
  return (['push', 'clone'] as const).map((op) => {
    const t = times[op];
    const value = median(t.wharf);
    const baseline = median(t.backend);
    const ratios = t.wharf.map((w, i) => round(w / t.backend[i], 2));
    // The runs are paired (both sides one after the other, on the same machine state), so the
    // ratio is the median of the per-run ratios: a run slowed by other load counts once, on
    // both sides, where the ratio of the two medians can take its medians from different runs.
    const ratio = median(ratios);
    return {
      figure: `git_${op}_mirror_${c.key}_${dialect}`,
      value: Math.round(value),
      unit: 'ms',
      baseline: Math.round(baseline),
      ratio,
      target: `≤ ${TARGET}× git http-backend`,
      met: ratio <= TARGET,
      ratio_of_medians: round(value / baseline, 2),
      ratio_min: Math.min(...ratios),
      ratio_max: Math.max(...ratios),
      ratios,
      runs: t.wharf.map(Math.round),
      baseline_runs: t.backend.map(Math.round),
      file_ms: Math.round(median(t.file)),
      file_runs: t.file.map(Math.round),
      ...(op === 'push' ? { recorded_ms: Math.round(median(times.recorded)), recorded_runs: times.recorded.map(Math.round) } : {}),
      shape: c.describe,
      commits: c.commits,
      refs: c.refs,
      pack_mb: round(packBytes / 1e6, 1),
      note: `git ${op} --mirror through wharf serve (${dialect}) and through bare git http-backend (baseline), medians of ${RUNS} paired runs; ratio: the median of the per-run ratios; file:// for information`,
    };
  });
}

/** Pushes and clones a small repository through both servers, untimed: both processes warm before the first timing. */
async function warmUp(dir: string, servers: Servers, dialect: Dialect): Promise<void> {
  const src = path.join(dir, `warm-${dialect}.git`);
  await generateShape(src, { main: 200, branches: 2, branchCommits: 5, tags: 5, pulls: 5, pullCommits: 2 });
  for (const side of ['wharf', 'backend'] as const) {
    const name = `warm-${dialect}`;
    if (side === 'backend') await baselineRepository(path.join(servers.backendRoot, `${name}.git`));
    await timedGit(['push', '-q', '--mirror', servers.url(side, name)], src);
    if (side === 'wharf') await untilRecorded(servers.db, servers.wharf);
    await timedGit(['clone', '-q', '--mirror', servers.url(side, name), path.join(dir, `warm-${side}-${dialect}.git`)], dir);
  }
}

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-git-'));
  const backendRoot = path.join(dir, 'backend');
  fs.mkdirSync(backendRoot);
  let backend: Child | undefined;
  try {
    const sources: Array<{ c: Case; src: string; packBytes: number }> = [];
    for (const c of CASES) {
      const src = path.join(dir, `src-${c.key}.git`);
      const started = performance.now();
      const packBytes = await c.build(src);
      process.stderr.write(`git: generated shape ${c.key} (${c.describe}, ${round(packBytes / 1e6, 1)} MB) in ${Math.round(performance.now() - started)} ms\n`);
      sources.push({ c, src, packBytes });
    }
    backend = await child(process.execPath, ['--import', import.meta.resolve('tsx'), GIT_BACKEND_SCRIPT, backendRoot], process.env, /port \d+/);
    const backendPort = /port (\d+)/.exec(backend.out())![1];
    const dialects: Dialect[] = postgresServer ? ['sqlite', 'postgres'] : ['sqlite'];
    for (const dialect of dialects) {
      const runDir = path.join(dir, dialect);
      fs.mkdirSync(runDir);
      const database = await freshDatabase(runDir, dialect === 'postgres' ? postgresServer : undefined, 'wharf_bench_git');
      const wharf = await serveWharf(runDir, database.url);
      const db = connect(database.url);
      const servers: Servers = {
        wharf,
        db,
        backendRoot,
        url: (side, name) =>
          side === 'wharf' ? `${wharf.url.replace('http://', `http://x:${wharf.token}@`)}/demo/${name}.git` : `http://127.0.0.1:${backendPort}/${name}.git`,
      };
      try {
        await warmUp(runDir, servers, dialect);
        for (const { c, src, packBytes } of sources) for (const f of figures(c, packBytes, dialect, await measure(runDir, src, c, servers, dialect))) report(f);
      } catch (err) {
        throw new Error(`${dialect}: ${(err as Error).message}\nwharf serve logged:\n${wharf.out().slice(-4000)}`, { cause: err });
      } finally {
        await db.destroy();
        wharf.proc.kill('SIGKILL');
        await wharf.exited;
        await database.drop();
      }
    }
  } finally {
    backend?.proc.kill('SIGKILL');
    await backend?.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
