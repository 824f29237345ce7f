import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { asUserRuns, WHARF_BIN } from './cli.ts';
import type { TestLike } from './wharf.ts';

/** A real `wharf serve` child process, listening. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** The admin token it printed, on the first start of its database. */
  token?: string;
  /** Resolves with the exit code (null when ended by a signal) once the process is gone. */
  exited: Promise<number | null>;
  /** Everything it printed on stdout so far. */
  output(): string;
  /** The last 4 KiB it printed on stderr. */
  errors(): string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop), and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The environment of a test node on a database, with its data and repositories under
 * `dir`: quiet, on a loopback port, delivering to loopback receivers; `extra` adds or
 * overrides settings.
 */
export function serveEnv(dir: string, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    WEBHOOK_ALLOWED_HOSTS: 'loopback',
    ...extra,
  };
}

/** How to start it: `t` kills it when the test ends; `timeoutMs` bounds the start. */
export interface ServeOptions {
  t?: TestLike;
  timeoutMs?: number;
}

/**
 * Starts `wharf serve` as a real child process with `env` added to this one's and waits
 * until it prints its address (and, on the first start of the database, its admin
 * token, printed in the same write). Rejects (and kills it) if it exits first or takes
 * over `timeoutMs`; the error carries what it printed. The one way tests start a real
 * server process.
 */
export async function startServeProcess(env: Record<string, string>, options: ServeOptions | number = {}): Promise<ServeProcess> {
  const { t, timeoutMs = 120_000 } = typeof options === 'number' ? { timeoutMs: options } : options;
  const [command, args, asUser] = asUserRuns([WHARF_BIN, 'serve']);
  const child = spawn(command, args, {
    // Tests of attempt schedules make receivers fail many times in a row: a pause threshold they never reach (endpoint health's own tests set theirs).
    env: { ...process.env, ...asUser, WEBHOOK_PAUSE_AFTER: '1000000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const kill = async () => {
    if (!gone()) child.kill('SIGKILL');
    await exited;
  };
  t?.teardown(kill);
  let out = '';
  let err = '';
  // Read stderr too: an unread pipe would stall a process that writes much to it.
  child.stderr!.on('data', (c) => (err = (err + c).slice(-4096)));
  const ready = () => /listening on (http:\/\/\S+)/.test(out) && (!/Created user/.test(out) || /sign in with this token/.test(out));
  await new Promise<void>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void kill();
      reject(new Error(`${why}; stdout: ${out.slice(-2048)}; stderr: ${err}`));
    };
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms waiting for wharf serve to listen`), timeoutMs);
    child.stdout!.on('data', (c) => {
      out += c;
      if (ready()) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      if (!ready()) fail(`wharf serve exited (${code}) before listening`);
    });
  });
  return {
    child,
    url: /listening on (http:\/\/\S+)/.exec(out)![1],
    token: /sign in with this token: (wharf_\S+)/.exec(out)?.[1],
    exited,
    output: () => out,
    errors: () => err,
    kill,
    async stop() {
      if (!gone()) child.kill('SIGTERM');
      return exited;
    },
  };
}
