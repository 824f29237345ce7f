import { spawn, type ChildProcessByStdio } from 'node:child_process';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';

/**
 * Settings of the server user's ~/.gitconfig (which Wharf's gits read, for an operator's
 * transport settings) that would change what Wharf parses, undone: log.showSignature has
 * git log print every signed commit's verification into its output, whatever the format
 * (and start gpg for each); i18n.logOutputEncoding has it re-encode messages and names
 * that Wharf reads as UTF-8. Given on the command line, they win over any config file and
 * reach the gits a git starts (hooks included).
 */
export const PARSED_AS_WRITTEN = ['-c', 'log.showSignature=false', '-c', 'i18n.logOutputEncoding=UTF-8'];

/**
 * Options that precede every git subcommand Wharf runs. Hooks are off: a repository
 * (an imported one above all) must never run hooks of its own; the smart-HTTP route
 * turns on Wharf's own hooks directory explicitly (transport/git/cgi.ts, the one git
 * started elsewhere, as it streams a request both ways).
 */
export const SAFE_GIT_OPTIONS = ['-c', 'core.hooksPath=/dev/null', ...PARSED_AS_WRITTEN];

/** Environment for every git child process: no prompts, no system config (the user's ~/.gitconfig is read; see PARSED_AS_WRITTEN). */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    ...extra,
  };
}

/** How to start one git. */
export interface StartGitOptions {
  cwd?: string;
  /** Environment beside gitEnv()'s. */
  env?: Record<string, string>;
  /** `-c` options after the safe ones, before the subcommand (an import source's transport rules). */
  config?: string[];
  /**
   * Written to git's stdin, which is then closed; null (the default) gives git no stdin;
   * 'open' leaves stdin open for the caller to write and end (a long-lived `cat-file --batch`).
   */
  input?: string | Buffer | null | 'open';
  /** Its own process group, so a kill of the group reaches git's children (remote helpers, index-pack). */
  detached?: boolean;
  /**
   * Housekeeping no one waits on (packing refs after a push): git runs at the lowest CPU
   * priority, so on busy cores it takes what deliveries and requests leave.
   */
  background?: boolean;
}

/** The niceness of a background git (the lowest priority, as `nice -n 19` gives). */
const BACKGROUND_PRIORITY = 19;

/** A started git: the process, and its end (exit code and the last 16 KiB of stderr). */
export interface StartedGit {
  child: ChildProcessByStdio<Writable | null, Readable, Readable>;
  /** Resolves when git ends; rejects only when it could not be started. */
  done: Promise<{ code: number | null; stderr: string }>;
}

/**
 * Starts git with the safe options: the one place Wharf spawns git (the CGI backend
 * aside). Every stream's errors are handled here (a broken pipe, a failed spawn), so no
 * git run can take the process down; stdout is the caller's to read.
 */
export function startGit(args: string[], options: StartGitOptions = {}): StartedGit {
  const input = options.input ?? null;
  const child = spawn('git', [...SAFE_GIT_OPTIONS, ...(options.config ?? []), ...args], {
    cwd: options.cwd,
    env: gitEnv(options.env),
    stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  }) as StartedGit['child'];
  if (options.background && child.pid !== undefined) {
    try {
      os.setPriority(child.pid, BACKGROUND_PRIORITY);
    } catch {
      // It ended already, or the system refuses: it runs at the normal priority.
    }
  }
  let stderr = '';
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-16384)));
  child.stderr.on('error', () => {});
  child.stdout.on('error', () => child.kill('SIGKILL'));
  if (child.stdin) {
    // git may exit before reading all of stdin (an error); its exit code tells what happened.
    child.stdin.on('error', () => {});
    if (input !== 'open') child.stdin.end(input);
  }
  const done = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
  return { child, done };
}

/** The error of a git that exited non-zero: its stderr and exit code kept for the caller (git/stderr.ts reads them). */
function gitError(args: string[], stderr: string, exitCode: unknown): Error {
  return Object.assign(new Error(`git ${args[0]} failed: ${stderr.trim()}`), { stderr, exitCode });
}

/** The exit code of a git that failed (gitError's), or undefined for an error of any other kind. */
export function gitExitCode(err: unknown): unknown {
  return (err as { exitCode?: unknown } | null | undefined)?.exitCode;
}

/**
 * Runs git feeding `input` (or nothing) to its stdin and calls `onData` with each stdout
 * chunk as it arrives, so long outputs (rev-list of a whole history) are never held twice.
 * Resolves when git exits 0; rejects with its stderr otherwise.
 */
export async function gitPiped(args: string[], input: string | Buffer | null, onData: (chunk: Buffer) => void, options: { cwd?: string } = {}): Promise<void> {
  const { child, done } = startGit(args, { cwd: options.cwd, input });
  child.stdout.on('data', onData);
  const { code, stderr } = await done;
  if (code !== 0) throw gitError(args, stderr, code);
}

/** Runs git with stdin input and returns its whole stdout as a Buffer. */
export async function gitBuffer(args: string[], input: string | Buffer, options: { cwd?: string } = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await gitPiped(args, input, (c) => chunks.push(c), options);
  return Buffer.concat(chunks);
}

/** Runs git with arguments (never a shell) and returns stdout; rejects with stderr on a non-zero exit or past `maxBuffer` bytes. */
export async function git(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; maxBuffer?: number; background?: boolean } = {},
): Promise<string> {
  const max = options.maxBuffer ?? 64 * 1024 * 1024;
  const { child, done } = startGit(args, { cwd: options.cwd, env: options.env, background: options.background });
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  child.stdout.on('data', (c: Buffer) => {
    size += c.length;
    if (size > max) {
      over = true;
      child.kill('SIGKILL');
    } else chunks.push(c);
  });
  const { code, stderr } = await done;
  if (over) throw gitError(args, `its output is larger than ${max} bytes`, code);
  if (code !== 0) throw gitError(args, stderr, code);
  return Buffer.concat(chunks).toString('utf8');
}

/** True when git exits 0 (a question such as `merge-base --is-ancestor`); false on any other end, a failed start included. */
export async function gitSucceeds(args: string[], options: { cwd?: string } = {}): Promise<boolean> {
  const { child, done } = startGit(args, options);
  child.stdout.resume();
  return done.then(
    ({ code }) => code === 0,
    () => false,
  );
}
