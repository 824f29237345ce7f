// Git figure of SPEC §13: `git push --mirror` and `git clone` of a generated 50 MB,
// 5,000-commit repository through Wharf, each as a ratio to the same operation against
// a file:// bare repository in the same run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import type { Bench } from './run.ts';
import { COMMITS, generateRepository, median, timedGit } from './fixtures.ts';

const RUNS = 3;
const TARGET = 1.3;

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
    for (let run = 0; run < RUNS; run++) {
      const base = path.join(dir, `base-${run}.git`);
      await timedGit(['init', '-q', '--bare', base], dir);
      push.file.push(await timedGit(['push', '-q', '--mirror', `file://${base}`], src));
      push.wharf.push(await timedGit(['push', '-q', '--mirror', wharfUrl(`bench-${run}`)], src));
      clone.file.push(await timedGit(['clone', '-q', `file://${base}`, path.join(dir, `clone-file-${run}`)], dir));
      clone.wharf.push(await timedGit(['clone', '-q', wharfUrl(`bench-${run}`), path.join(dir, `clone-wharf-${run}`)], dir));
    }
    for (const [name, times] of [['git push --mirror', push], ['git clone', clone]] as const) {
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
      });
    }
  } finally {
    await running.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
