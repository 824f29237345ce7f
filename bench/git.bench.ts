// Git figure of SPEC §13: `git push --mirror` and `git clone` of a generated 50 MB,
// 5,000-commit repository through Wharf, each as a ratio to the same operation against
// a file:// bare repository in the same run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';

import type { Db } from '../src/db/connect.ts';
import type { Bench } from './run.ts';
import { COMMITS, generateRepository, median, timedGit } from './fixtures.ts';

const RUNS = 5;
const TARGET = 1.3;

/** Waits until no push record is left (every push's events recorded); returns how long that took in ms. */
async function untilRecorded(db: Db): Promise<number> {
  const started = performance.now();
  while (Number(((await db('push_records').count({ n: '*' })) as any[])[0].n) > 0) await new Promise((r) => setTimeout(r, 2));
  return performance.now() - started;
}

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-git-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: path.join(dir, 'data'), REPOS_DIR: path.join(dir, 'repos'), LOG_LEVEL: 'warn' });
  const running = await startServer(config, { logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    const token = running.bootstrap!.token;
    const src = path.join(dir, 'src.git');
    const packBytes = await generateRepository(src);
    const wharfUrl = (name: string) => `${running.url.replace('http://', `http://x:${token}@`)}/demo/${name}.git`;

    const push = { wharf: [] as number[], file: [] as number[] };
    const clone = { wharf: [] as number[], file: [] as number[] };
    const recorded: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const base = path.join(dir, `base-${run}.git`);
      await timedGit(['init', '-q', '--bare', base], dir);
      push.file.push(await timedGit(['push', '-q', '--mirror', `file://${base}`], src));
      push.wharf.push(await timedGit(['push', '-q', '--mirror', wharfUrl(`bench-${run}`)], src));
      // The push's events are recorded in the background once it returns; let that finish
      // before the next timing so it does not share the machine with it.
      recorded.push(await untilRecorded(running.services.db));
      clone.file.push(await timedGit(['clone', '-q', `file://${base}`, path.join(dir, `clone-file-${run}`)], dir));
      clone.wharf.push(await timedGit(['clone', '-q', wharfUrl(`bench-${run}`), path.join(dir, `clone-wharf-${run}`)], dir));
    }
    for (const [name, times] of [
      ['git push --mirror', push],
      ['git clone', clone],
    ] as const) {
      const value = median(times.wharf);
      const baseline = median(times.file);
      const ratio = Math.round((value / baseline) * 100) / 100;
      report({
        figure: `${name} of a ${COMMITS}-commit, ${Math.round(packBytes / 1e6)} MB repository through Wharf`,
        value: Math.round(value),
        unit: 'ms',
        baseline: Math.round(baseline),
        ratio,
        target: `≤ ${TARGET}× the file:// baseline`,
        met: ratio <= TARGET,
        runs: times.wharf.map(Math.round),
        baseline_runs: times.file.map(Math.round),
        ...(times === push ? { events_recorded_ms_after_return: recorded.map(Math.round) } : {}),
      });
    }
  } finally {
    await running.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
