// Where a push's time goes (the profile behind the git figures of SPEC §13): one
// `git push --mirror` of a shape (BENCH_GIT_SHAPES, default c) to bare `git http-backend`
// and to `wharf serve` (SQLite), every git process on both servers traced with git's
// trace2 (a temporary HOME whose .gitconfig sets trace2.eventTarget), and Wharf's own
// request log at debug. Prints, per side, the push's wall time and the time of each git
// process the server ran, by command, so the difference between the two sides is named
// process by process. Not a figure: `npm run bench -- pushProfile` prints it on stderr.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Bench } from './run.ts';
import { child, COMMITS, freshDatabase, generateRepository, serveWharf, timedGit, type Child } from './fixtures.ts';
import { GIT_BACKEND_SCRIPT } from './gitBackend.ts';
import { baselineRepository, generateShape, SHAPE_B, SHAPE_C, type Shape } from './gitShapes.ts';

/** The git bench's shapes (git.bench.ts): a is fixtures.ts's repository. */
const SHAPES: Record<string, Shape | 'a'> = { a: 'a', b: SHAPE_B, c: SHAPE_C };

/** One traced git process: its command line and how long it ran, and under which process it ran. */
interface Traced {
  sid: string;
  argv: string[];
  ms: number;
  /** Epoch ms it started. */
  at: number;
  /** Its children and regions, in order: what, and when from its start (ms). */
  steps: string[];
}

/** Reads a trace2 event directory: one record per git process. */
function readTraces(dir: string): Traced[] {
  const bySid = new Map<string, Traced>();
  for (const file of fs.readdirSync(dir)) {
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line);
      const t: Traced = bySid.get(e.sid) ?? { sid: e.sid, argv: [], ms: 0, at: 0, steps: [] };
      if (e.event === 'start') [t.argv, t.at] = [e.argv, Date.parse(e.time)];
      // Since the process started: t_abs where the event has it (git gives none for child_start and child_exit), else from its time.
      const sinceStart = typeof e.t_abs === 'number' ? e.t_abs * 1000 : Date.parse(e.time) - t.at;
      const when = `${Math.round(sinceStart).toString().padStart(6)} ms`;
      if (e.event === 'child_start') t.steps.push(`${when} start ${e.child_class === 'hook' ? `hook ${e.hook_name}` : commandOf(e.argv)}`);
      if (e.event === 'child_exit') t.steps.push(`${when} end (${Math.round(e.t_rel * 1000)} ms)`);
      if (e.event === 'region_leave' && e.t_rel > 0.005) t.steps.push(`${when} region ${e.category}/${e.label} (${Math.round(e.t_rel * 1000)} ms)`);
      if (e.event === 'exit' || e.event === 'atexit') t.ms = Math.max(t.ms, e.t_abs * 1000);
      bySid.set(e.sid, t);
    }
  }
  return [...bySid.values()];
}

/** A process's command, without paths and ids: what to sum by. */
const commandOf = (argv: string[]) =>
  argv
    .slice(0, 4)
    .map((a) => (a.includes('/') ? path.basename(a) : a))
    .filter((a) => !/^[0-9a-f]{40}$/.test(a))
    .join(' ');

function summary(traces: Traced[]): string {
  const byCommand = new Map<string, { n: number; ms: number }>();
  for (const t of traces) {
    const key = `${'  '.repeat(t.sid.split('/').length - 1)}${commandOf(t.argv)}`;
    const s = byCommand.get(key) ?? { n: 0, ms: 0 };
    s.n++;
    s.ms += t.ms;
    byCommand.set(key, s);
  }
  return [...byCommand]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([k, s]) => `    ${Math.round(s.ms).toString().padStart(7)} ms  ×${s.n}  ${k}`)
    .join('\n');
}

const bench: Bench = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-pushprofile-'));
  const home = path.join(dir, 'home');
  const traces = { wharf: path.join(dir, 'trace-wharf'), backend: path.join(dir, 'trace-backend') };
  for (const d of [home, ...Object.values(traces)]) fs.mkdirSync(d, { recursive: true });
  const backendRoot = path.join(dir, 'backend');
  fs.mkdirSync(backendRoot);
  const procs: Child[] = [];
  try {
    for (const key of (process.env.BENCH_GIT_SHAPES ?? 'c').split(',')) {
      const shape = SHAPES[key];
      const src = path.join(dir, `src-${key}.git`);
      if (shape === 'a') await generateRepository(src);
      else await generateShape(src, shape);
      process.stderr.write(`pushProfile: shape ${key}${shape === 'a' ? ` (${COMMITS} commits)` : ''}\n`);
      for (const side of ['backend', 'wharf'] as const) {
        const trace = path.join(traces[side], key);
        fs.mkdirSync(trace);
        fs.writeFileSync(path.join(home, '.gitconfig'), `[trace2]\n\teventTarget = ${trace}\n`);
        const env = { ...process.env, HOME: home };
        let url: string;
        if (side === 'backend') {
          await baselineRepository(path.join(backendRoot, `${key}.git`));
          const b = await child(process.execPath, ['--import', import.meta.resolve('tsx'), GIT_BACKEND_SCRIPT, backendRoot], env, /port \d+/);
          procs.push(b);
          url = `http://127.0.0.1:${/port (\d+)/.exec(b.out())![1]}/${key}.git`;
        } else {
          const runDir = path.join(dir, `wharf-${key}`);
          fs.mkdirSync(runDir);
          const database = await freshDatabase(runDir);
          const w = await serveWharf(runDir, database.url, { HOME: home, LOG_LEVEL: 'debug' });
          procs.push(w);
          url = `${w.url.replace('http://', `http://x:${w.token}@`)}/demo/${key}.git`;
        }
        const ms = await timedGit(['push', '-q', '--mirror', url], src);
        const ended = Date.now();
        await new Promise((r) => setTimeout(r, 1000));
        // Only what ran during the push: Wharf records its events afterwards, in the background.
        const during = readTraces(trace).filter((t) => t.at <= ended);
        process.stderr.write(`  ${side}: push ${Math.round(ms)} ms; git processes on the server during it:\n${summary(during)}\n`);
        for (const t of during.filter((d) => d.argv.includes('--stateless-rpc') && d.argv[1] === 'receive-pack'))
          process.stderr.write(`    receive-pack, step by step:\n${t.steps.map((x) => `      ${x}`).join('\n')}\n`);
        const w = procs.at(-1)!;
        if (side === 'wharf')
          for (const line of w
            .out()
            .split('\n')
            .filter((l) => /http-backend exited|"msg":"request"|push recorded/.test(l)))
            process.stderr.write(`    log: ${line.slice(0, 300)}\n`);
      }
    }
  } finally {
    for (const p of procs) p.proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
