// Where a push's time goes (the profile behind the git figures of SPEC §13): one
// `git push --mirror` of a shape (BENCH_GIT_SHAPES, default c) to bare `git http-backend`
// and to `wharf serve` (SQLite), every git process on both servers traced with git's
// trace2 (a temporary HOME whose .gitconfig sets trace2.eventTarget), and Wharf's own
// request log at debug. Prints, per side, the push's wall time and the time of each git
// process the server ran, by command, and Wharf's push over the backend's, step by step
// (receive-pack's children, the rest of receive-pack, what ran outside it), so the difference
// between the two sides is named process by process. Not a figure: `npm run bench --
// pushProfile` prints it on stderr.
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
  /** How long its children ran, by what they were (`index-pack`, `hook pre-receive`, …), ms. */
  children: Map<string, number>;
  /** What each child it started is, by trace2's child_id, until it exits. */
  started: Map<number, string>;
}

/** Reads a trace2 event directory: one record per git process. */
function readTraces(dir: string): Traced[] {
  const bySid = new Map<string, Traced>();
  for (const file of fs.readdirSync(dir)) {
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line);
      const t: Traced = bySid.get(e.sid) ?? { sid: e.sid, argv: [], ms: 0, at: 0, steps: [], children: new Map(), started: new Map() };
      if (e.event === 'start') [t.argv, t.at] = [e.argv, Date.parse(e.time)];
      // Since the process started: t_abs where the event has it (git gives none for child_start and child_exit), else from its time.
      const sinceStart = typeof e.t_abs === 'number' ? e.t_abs * 1000 : Date.parse(e.time) - t.at;
      const when = `${Math.round(sinceStart).toString().padStart(6)} ms`;
      if (e.event === 'child_start') {
        const what = e.child_class === 'hook' ? `hook ${e.hook_name}` : commandOf(e.argv);
        t.steps.push(`${when} start ${what}`);
        t.started.set(e.child_id, what);
      }
      if (e.event === 'child_exit') {
        t.steps.push(`${when} end (${Math.round(e.t_rel * 1000)} ms)`);
        const what = t.started.get(e.child_id) ?? '?';
        t.children.set(what, (t.children.get(what) ?? 0) + e.t_rel * 1000);
      }
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

/** What one side's push was made of: its wall time, receive-pack's own, and receive-pack's children by what they were. */
interface PushParts {
  push: number;
  receivePack: number;
  children: Map<string, number>;
}

/** A receive-pack serving a push's POST (not its ref advertisement). */
const isReceivePack = (t: Traced) => t.argv.includes('--stateless-rpc') && t.argv[1] === 'receive-pack';

/** How long some children ran in all, ms. */
const childrenMs = (children: Map<string, number>) => [...children.values()].reduce((a, b) => a + b, 0);

/** The receive-pack that took the pack (the one whose children ran longest: a credential probe runs one of its own, with nothing to do). */
function partsOf(push: number, during: Traced[]): PushParts {
  const main = during.filter(isReceivePack).sort((a, b) => childrenMs(b.children) - childrenMs(a.children))[0];
  return { push, receivePack: main?.ms ?? 0, children: main?.children ?? new Map() };
}

/**
 * Wharf's push over the backend's, step by step: each child of receive-pack (index-pack,
 * the connectivity check, each hook), the rest of receive-pack (ref updates, its own
 * start), and what ran outside it (the requests before the pack, authentication, the
 * answer's end, the client), so the extra time is named, not guessed.
 */
function difference(backend: PushParts, wharf: PushParts): string {
  const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(Math.round(ms))} ms`;
  const names = [...new Set([...backend.children.keys(), ...wharf.children.keys()])];
  const parts = names.map((n) => `${n} ${signed((wharf.children.get(n) ?? 0) - (backend.children.get(n) ?? 0))}`);
  const rest = wharf.receivePack - childrenMs(wharf.children) - (backend.receivePack - childrenMs(backend.children));
  const outside = wharf.push - wharf.receivePack - (backend.push - backend.receivePack);
  return `  wharf − backend: push ${signed(wharf.push - backend.push)} = ${[...parts, `rest of receive-pack ${signed(rest)}`, `outside receive-pack ${signed(outside)}`].join(', ')}`;
}

const bench: Bench = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-pushprofile-'));
  const home = path.join(dir, 'home');
  const traces = { wharf: path.join(dir, 'trace-wharf'), backend: path.join(dir, 'trace-backend') };
  for (const d of [home, ...Object.values(traces)]) fs.mkdirSync(d, { recursive: true });
  const backendRoot = path.join(dir, 'backend');
  fs.mkdirSync(backendRoot);
  const procs: Child[] = [];
  const warm = path.join(dir, 'warm');
  try {
    await timedGit(['init', '-q', '--initial-branch=main', warm], dir);
    await timedGit(['-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-m', 'warm'], warm);
    for (const key of (process.env.BENCH_GIT_SHAPES ?? 'c').split(',')) {
      const shape = SHAPES[key];
      const src = path.join(dir, `src-${key}.git`);
      if (shape === 'a') await generateRepository(src);
      else await generateShape(src, shape);
      process.stderr.write(`pushProfile: shape ${key}${shape === 'a' ? ` (${COMMITS} commits)` : ''}\n`);
      const parts: Partial<Record<'backend' | 'wharf', PushParts>> = {};
      for (const side of ['backend', 'wharf'] as const) {
        const trace = path.join(traces[side], key);
        fs.mkdirSync(trace);
        fs.writeFileSync(path.join(home, '.gitconfig'), `[trace2]\n\teventTarget = ${trace}\n`);
        const env = { ...process.env, HOME: home };
        let url: string;
        if (side === 'backend') {
          await baselineRepository(path.join(backendRoot, `${key}.git`));
          await baselineRepository(path.join(backendRoot, `warm-${key}.git`));
          const b = await child(process.execPath, ['--import', import.meta.resolve('tsx'), GIT_BACKEND_SCRIPT, backendRoot], env, /port \d+/);
          procs.push(b);
          url = `http://127.0.0.1:${/port (\d+)/.exec(b.out())![1]}/${key}.git`;
        } else {
          const runDir = path.join(dir, `wharf-${key}`);
          fs.mkdirSync(runDir);
          const database = await freshDatabase(runDir);
          const w = await serveWharf(runDir, database.url, { HOME: home, LOG_LEVEL: 'debug' });
          procs.push(w);
          // Its empty repository made before the push, as the backend's is (git bench alike).
          await w.api('POST', '/api/v1/orgs/demo/repos', { name: key });
          url = `${w.url.replace('http://', `http://x:${w.token}@`)}/demo/${key}.git`;
        }
        // A first push of one commit to another repository warms the server (a process's
        // first request pays for its loading), as every push but a node's first finds it.
        await timedGit(['push', '-q', '--mirror', url.replace(`/${key}.git`, `/warm-${key}.git`)], warm);
        const started = Date.now();
        const ms = await timedGit(['push', '-q', '--mirror', url], src);
        const ended = Date.now();
        await new Promise((r) => setTimeout(r, 1000));
        // Only what ran during the push: Wharf records its events afterwards, in the background.
        const during = readTraces(trace).filter((t) => t.at >= started && t.at <= ended);
        process.stderr.write(`  ${side}: push ${Math.round(ms)} ms; git processes on the server during it:\n${summary(during)}\n`);
        parts[side] = partsOf(ms, during);
        for (const t of during.filter(isReceivePack)) process.stderr.write(`    receive-pack, step by step:\n${t.steps.map((x) => `      ${x}`).join('\n')}\n`);
        const w = procs.at(-1)!;
        if (side === 'wharf')
          for (const line of w
            .out()
            .split('\n')
            .filter((l) => /http-backend exited|"msg":"request"|push recorded|push landed/.test(l) && Number(/"time":(\d+)/.exec(l)?.[1] ?? 0) >= started))
            process.stderr.write(`    log: ${line.slice(0, 300)}\n`);
      }
      process.stderr.write(`${difference(parts.backend!, parts.wharf!)}\n`);
    }
  } finally {
    for (const p of procs) p.proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
