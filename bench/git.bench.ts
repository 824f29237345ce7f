// Git figure of SPEC §13: `git push --mirror` and `git clone` of a generated 50 MB,
// 5,000-commit repository through Wharf, each as a ratio to the same operation against
// a file:// bare repository in the same run.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import type { Bench } from './run.ts';

const COMMITS = 5000;
const BLOB_BYTES = 10 * 1024; // random, so the pack stays ~50 MB
const RUNS = 3;
const TARGET = 1.3;

/** Runs git quietly and returns how long it took in ms; throws on failure. */
function timedGit(args: string[], cwd: string, input?: (stdin: NodeJS.WritableStream) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('git', args, { cwd, env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-2000)));
    if (input) input(child.stdin);
    else child.stdin.end();
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`git ${args[0]}: ${stderr}`))));
  });
}

/** Writes a fast-import stream of COMMITS commits, each changing one of 50 files to fresh random bytes. */
function generate(stdin: NodeJS.WritableStream) {
  let i = 0;
  const write = () => {
    let ok = true;
    while (i < COMMITS && ok) {
      const blob = randomBytes(BLOB_BYTES);
      const message = `commit ${i}\n`;
      const head = `commit refs/heads/main\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${message.length}\n${message}M 644 inline file-${i % 50}.bin\ndata ${blob.length}\n`;
      ok = stdin.write(Buffer.concat([Buffer.from(head), blob, Buffer.from('\n')]));
      i++;
    }
    if (i < COMMITS) stdin.once('drain', write);
    else stdin.end();
  };
  write();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const bench: Bench = async (report) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-git-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: path.join(dir, 'data'), REPOS_DIR: path.join(dir, 'repos'), LOG_LEVEL: 'warn' });
  const running = await startServer(config, { logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    const token = running.bootstrap!.token;
    const src = path.join(dir, 'src.git');
    await timedGit(['init', '-q', '--bare', src], dir);
    await timedGit(['fast-import', '--quiet'], src, generate);
    await timedGit(['repack', '-adq'], src);
    const packBytes = fs.readdirSync(path.join(src, 'objects', 'pack')).reduce((n, f) => n + fs.statSync(path.join(src, 'objects', 'pack', f)).size, 0);
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
