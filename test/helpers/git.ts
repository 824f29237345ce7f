import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestLike, TestWharf } from './wharf.ts';

/** What a git run printed and how it ended. */
export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A place to run the git client: a HOME of its own (so nothing reads or writes the real global config) and a work dir. */
export interface GitClient {
  home: string;
  /** A fresh directory for clones and work trees. */
  dir: string;
  /** Runs git in `cwd` (default: dir); never throws. */
  run(args: string[], options?: { cwd?: string; env?: Record<string, string>; input?: string | Buffer }): Promise<GitResult>;
  /** Runs git and returns stdout; throws with stderr on failure. */
  ok(args: string[], options?: { cwd?: string; env?: Record<string, string>; input?: string | Buffer }): Promise<string>;
  /** Writes files in a work tree and commits them; returns the commit id. */
  commit(cwd: string, message: string, files?: Record<string, string | Buffer>): Promise<string>;
}

let clock = 1_700_000_000;

/** Creates a git client sandbox that is removed when the test ends. */
export function gitClient(t: TestLike): GitClient {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-git-'));
  const home = path.join(root, 'home');
  const dir = path.join(root, 'work');
  fs.mkdirSync(home);
  fs.mkdirSync(dir);
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const run: GitClient['run'] = (args, options = {}) =>
    new Promise((resolve) => {
      // Each run gets its own later date so commit ids differ and order by time is real.
      const date = `@${clock++ * 1} +0000`;
      const child = spawn('git', ['-c', 'init.defaultBranch=main', '-c', 'advice.detachedHead=false', ...args], {
        cwd: options.cwd ?? dir,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          LANG: 'C',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_TERMINAL_PROMPT: '0',
          GIT_AUTHOR_NAME: 'Ada Lovelace',
          GIT_AUTHOR_EMAIL: 'ada@example.com',
          GIT_COMMITTER_NAME: 'Ada Lovelace',
          GIT_COMMITTER_EMAIL: 'ada@example.com',
          GIT_AUTHOR_DATE: date,
          GIT_COMMITTER_DATE: date,
          ...options.env,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.stdin.on('error', () => {});
      child.stdin.end(options.input ?? '');
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const ok: GitClient['ok'] = async (args, options) => {
    const r = await run(args, options);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    home,
    dir,
    run,
    ok,
    async commit(cwd, message, files = { [`f-${clock}.txt`]: `${message}\n` }) {
      for (const [name, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(cwd, name)), { recursive: true });
        fs.writeFileSync(path.join(cwd, name), content);
      }
      await ok(['add', '-A'], { cwd });
      await ok(['commit', '-q', '-m', message], { cwd });
      return (await ok(['rev-parse', 'HEAD'], { cwd })).trim();
    },
  };
}

/** The Git URL of a repository on a test Wharf, with a token as the Basic password when given. */
export function repoUrl(w: TestWharf, fullName: string, token?: string): string {
  const url = new URL(`${w.url}/${fullName}.git`);
  if (token) {
    url.username = 'x';
    url.password = token;
  }
  return url.toString();
}

/** `git ls-remote` / `show-ref` output as a sorted "sha ref" list, HEAD left out. */
export function refList(output: string): string[] {
  return output
    .split('\n')
    .map((l) => l.trim().replace(/\s+/, ' '))
    .filter((l) => l && !l.endsWith(' HEAD'))
    .sort();
}

/** `git http-backend` processes this test process started (a server started in it runs them) still alive. */
export function backendsAlive(): number {
  const out = execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)]).toString();
  return out.split('\n').filter((l) => l.includes('http-backend')).length;
}
