import { spawn } from 'node:child_process';

/** The shape of a generated repository: a main line, branches and tags on it, pull refs with commits of their own. */
export interface RepoShape {
  /** Commits on main, one after another. */
  mainCommits: number;
  /** Branches besides main, each with one commit of its own on a point of main. */
  branches: number;
  /** Lightweight tags on points of main. */
  tags: number;
  /** refs/pull/<n>/head refs; every other one has a commit of its own, the rest point into main. */
  pulls: number;
}

/** How many commits a shape makes, and how many of them branches and tags reach. */
export function shapeCounts(s: RepoShape): { commits: number; onBranchesOrTags: number; refs: number } {
  const pullCommits = Math.ceil(s.pulls / 2);
  return { commits: s.mainCommits + s.branches + pullCommits, onBranchesOrTags: s.mainCommits + s.branches, refs: 1 + s.branches + s.tags + s.pulls };
}

/** Fills the bare repository `dir` with a repository of `shape`, fast, through `git fast-import`. */
export async function generateShapedRepo(dir: string, shape: RepoShape, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await run(['init', '-q', '--bare', dir], undefined, env);
  const child = spawn('git', ['fast-import', '--quiet'], { cwd: dir, env, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const done = new Promise<void>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import failed: ${stderr}`)))),
  );
  const write = (text: string) => (child.stdin.write(text) ? Promise.resolve() : new Promise<void>((r) => child.stdin.once('drain', () => r())));
  let time = 1_600_000_000;
  const commit = (ref: string, mark: number, message: string, from?: number) =>
    `commit ${ref}\nmark :${mark}\nauthor Ada <ada@example.com> ${time} +0000\ncommitter Ada <ada@example.com> ${time++} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n${from ? `from :${from}\n` : ''}\n`;
  let buf = '';
  for (let i = 1; i <= shape.mainCommits; i++) {
    buf += commit('refs/heads/main', i, `main ${i}`, i > 1 ? i - 1 : undefined);
    if (buf.length > 1 << 20) {
      await write(buf);
      buf = '';
    }
  }
  const point = (k: number, n: number) => 1 + Math.floor(((k + 1) * (shape.mainCommits - 1)) / (n + 1));
  let mark = shape.mainCommits;
  for (let b = 0; b < shape.branches; b++) buf += commit(`refs/heads/topic/b${b}`, ++mark, `branch ${b}`, point(b, shape.branches));
  for (let g = 0; g < shape.tags; g++) buf += `reset refs/tags/v${g}\nfrom :${point(g, shape.tags)}\n\n`;
  for (let p = 0; p < shape.pulls; p++) {
    if (p % 2 === 0) buf += commit(`refs/pull/${p}/head`, ++mark, `pull ${p}`, point(p, shape.pulls));
    else buf += `reset refs/pull/${p}/head\nfrom :${point(p, shape.pulls)}\n\n`;
    if (buf.length > 1 << 20) {
      await write(buf);
      buf = '';
    }
  }
  await write(buf);
  child.stdin.end();
  await done;
}

function run(args: string[], cwd: string | undefined, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env, stdio: 'ignore' });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args[0]} exited ${code}`))));
  });
}
