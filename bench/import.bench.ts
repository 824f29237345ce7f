// Import figure of SPEC §13: repository import of a generated 50 MB, 5,000-commit
// repository served by `git daemon` on loopback, from the API call to the finished job,
// as a ratio to `git clone --mirror` of the same source in the same run: the median of
// BENCH_RUNS (5) paired runs' ratios, with their spread. On SQLite, and on Postgres too
// when BENCH_DATABASE_URL or TEST_DATABASE_URL names a server (a fresh database of its own).
// Wharf runs as `wharf serve`, a process of its own as users run it: every git an import
// starts is forked from the server's address space, which the bench's own would enlarge.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Bench } from './run.ts';
import { COMMITS, freePort, freshDatabase, generateRepository, median, RUNS, serveWharf, spread, timedGit } from './fixtures.ts';

const TARGET = 1.1;
const postgresServer = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined;

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-import-'));
  const served = path.join(dir, 'served');
  fs.mkdirSync(served);
  const src = path.join(served, 'src.git');
  const packBytes = await generateRepository(src);
  const port = await freePort();
  // The daemon program itself, not the `git daemon` wrapper: killing the wrapper would orphan it.
  const execPath = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim();
  const daemon = spawn(
    path.join(execPath, 'git-daemon'),
    ['--export-all', `--base-path=${served}`, '--reuseaddr', '--listen=127.0.0.1', `--port=${port}`, served],
    { stdio: 'ignore' },
  );
  /** The paired runs on one database: a server of its own on a fresh database, the same source and daemon. */
  const measure = async (dialect: 'sqlite' | 'postgres') => {
    const runDir = path.join(dir, dialect);
    fs.mkdirSync(runDir);
    const database = await freshDatabase(runDir, dialect === 'postgres' ? postgresServer : undefined, 'wharf_bench_import');
    // The runner logs one line when a job ends, right after its result commits: the bench
    // learns of it there instead of polling the API, so no polling load is measured.
    const ended = new Map<number, (line: any) => void>();
    const phases: Record<string, unknown>[] = [];
    const early = new Map<number, any>();
    const running = await serveWharf(runDir, database.url, { LOG_LEVEL: 'info', IMPORT_ALLOWED_HOSTS: 'loopback' });
    let partial = '';
    running.proc.stdout!.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const text of lines) {
        if (!text.startsWith('{')) continue;
        const line = JSON.parse(text);
        if (line.import_id === undefined || !/^import (succeeded|failed)/.test(line.msg)) continue;
        const waiting = ended.get(line.import_id);
        if (waiting) waiting(line);
        else early.set(line.import_id, line);
      }
    });
    try {
      const url = `git://127.0.0.1:${port}/src.git`;
      for (let i = 0; i < 100; i++) {
        if (
          await timedGit(['ls-remote', url], dir).then(
            () => true,
            () => false,
          )
        )
          break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const headers = { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' };
      const importOnce = async (name: string) => {
        const started = performance.now();
        const res = await fetch(`${running.url}/api/v1/repos/import`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ source_url: url, target_org: 'demo', name }),
        });
        const job: any = await res.json();
        if (res.status !== 202) throw new Error(`import: ${res.status} ${JSON.stringify(job)}`);
        const line = early.get(job.id) ?? (await new Promise<any>((resolve) => ended.set(job.id, resolve)));
        const took = performance.now() - started;
        if (line.msg !== 'import succeeded') throw new Error(`import failed: ${line.error}`);
        phases.push(line);
        return took;
      };
      // One untimed round first, so neither side pays for a cold start.
      await timedGit(['clone', '-q', '--mirror', url, path.join(runDir, 'warm.git')], dir);
      await importOnce('warm');
      phases.length = 0;
      const times = { import: [] as number[], clone: [] as number[], checked: [] as number[] };
      for (let run = 0; run < RUNS; run++) {
        times.clone.push(await timedGit(['clone', '-q', '--mirror', url, path.join(runDir, `mirror-${run}.git`)], dir));
        times.import.push(await importOnce(`bench-${run}`));
        // For information: the same clone with the object checks an import makes (transfer.fsckObjects, as Wharf's copy runs it).
        times.checked.push(await timedGit(['-c', 'transfer.fsckObjects=true', 'clone', '-q', '--mirror', url, path.join(runDir, `checked-${run}.git`)], dir));
      }
      const phaseMedian = (key: string) => Math.round(median(phases.map((l) => Number(l[key]))));
      // Each run's import against the clone just before it: the machine drifts between runs,
      // and a ratio of two medians may take them from different runs.
      const ratios = times.import.map((t, i) => t / times.clone[i]);
      const ratio = Math.round(median(ratios) * 100) / 100;
      report({
        figure: `repository import of a ${COMMITS}-commit, ${Math.round(packBytes / 1e6)} MB repository from git daemon${dialect === 'postgres' ? ' (Postgres)' : ''}`,
        value: Math.round(median(times.import)),
        unit: 'ms',
        baseline: Math.round(median(times.clone)),
        ratio,
        ratio_spread: spread(ratios, 2),
        ratio_of_medians: Math.round((median(times.import) / median(times.clone)) * 100) / 100,
        target: `≤ ${TARGET}× git clone --mirror of the same source`,
        met: ratio <= TARGET,
        runs: times.import.map(Math.round),
        baseline_runs: times.clone.map(Math.round),
        // Where an import's time goes (medians of the runner's own phase timings): the copy (a clone with object checks), the
        // .gitmodules, LFS pointer and ref scans, the LFS fetch, the move into place; the rest is the API call and the claim.
        phases_ms: { copy: phaseMedian('copy_ms'), check: phaseMedian('check_ms'), lfs: phaseMedian('lfs_ms'), finalize: phaseMedian('finalize_ms') },
        checked_clone_ms: Math.round(median(times.checked)),
        ratio_to_checked_clone: Math.round(median(times.import.map((t, i) => t / times.checked[i])) * 100) / 100,
      });
    } finally {
      running.proc.kill('SIGTERM');
      await running.exited;
      await database.drop();
    }
  };
  try {
    for (const dialect of postgresServer ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) await measure(dialect);
  } finally {
    daemon.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
