import fs from 'node:fs/promises';
import path from 'node:path';
import { startGit } from '../git/run.ts';
import { describeGitFailure, type GitFailure } from './gitErrors.ts';
import { readGitStderr } from '../git/stderr.ts';
import type { Credentials } from './url.ts';
import { MIN_BYTES_PER_SECOND, StallError, stallWatch } from './limits.ts';
import { parseGitProgress } from './progress.ts';

/**
 * Raised when git against a source fails; the message is scrubbed of credentials. Not a
 * WharfError: it never reaches a request; the import runner writes its message into the
 * job's `error` and decides on a retry by `failure.kind`.
 */
export class GitRunError extends Error {
  override name = 'GitRunError';
  constructor(readonly failure: GitFailure) {
    super(failure.message);
  }
}

/** Raised when a git run was stopped through its signal (cancel, timeout, shutdown); control flow of the runner, never shown. */
export class GitAbortedError extends Error {}

// SECURITY (SPEC §7.5): only the three network transports, no hooks (SAFE_GIT_OPTIONS,
// as for every git), no redirects, and no credential helpers beyond our askpass. Stalled
// transfers count as broken connections.
const SOURCE_OPTIONS = [
  '-c',
  'protocol.allow=never',
  '-c',
  'protocol.http.allow=always',
  '-c',
  'protocol.https.allow=always',
  '-c',
  'protocol.git.allow=always',
  '-c',
  'http.followRedirects=false',
  '-c',
  'credential.helper=',
  '-c',
  'fetch.recurseSubmodules=false',
  // SPEC §7.6: objects are checked as they arrive, with the checks of a push
  // (receive.fsckObjects, default severities, .gitmodules included).
  '-c',
  'transfer.fsckObjects=true',
];

/** The most of git's standard output kept (the source's ref list, for ls-remote). */
const MAX_OUTPUT = 32 * 1024 * 1024;

// The askpass program reads the credentials from its environment, so they never
// appear in a process argument, a URL or a file.
const ASKPASS = `#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$WHARF_IMPORT_USERNAME" ;;
  *) printf '%s\\n' "$WHARF_IMPORT_PASSWORD" ;;
esac
`;

/** Writes the askpass program under `dir` (once) and returns its path. */
export async function askpassProgram(dir: string): Promise<string> {
  const file = path.join(dir, 'askpass.sh');
  try {
    if ((await fs.readFile(file, 'utf8')) === ASKPASS) return file;
  } catch {
    // not there yet
  }
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}`;
  await fs.writeFile(tmp, ASKPASS, { mode: 0o700 });
  await fs.rename(tmp, file);
  return file;
}

/** How to run git against one source. */
export interface RemoteGitOptions {
  cwd?: string;
  /** `-c` options that pin the checked address (from pinSource). */
  pin: string[];
  credentials: Credentials | null;
  askpass: string;
  signal?: AbortSignal;
  /** Called with each piece of stderr as it arrives (progress reports). */
  onStderr?: (text: string) => void;
  /**
   * How long the run may go without progress: below MIN_BYTES_PER_SECOND of pack or
   * output on average over this long (curl's low-speed limit for http(s); gitActivity for
   * every transport). Default 2 minutes.
   */
  stallMs?: number;
}

/**
 * Runs git against a source with the safe options, credentials through askpass and
 * `--` before the URL (callers put it there). Kills the whole process group on abort.
 */
export function remoteGit(args: string[], options: RemoteGitOptions): Promise<string> {
  const env: Record<string, string> = {
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  };
  if (options.credentials) {
    env.GIT_ASKPASS = options.askpass;
    env.WHARF_IMPORT_USERNAME = options.credentials.username;
    env.WHARF_IMPORT_PASSWORD = options.credentials.password;
  }
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new GitAbortedError('stopped'));
    const stallMs = options.stallMs ?? 120_000;
    // A slow drip is a stall: curl gives up below 1 KiB/s over the window, not only at 0.
    const lowSpeed = ['-c', `http.lowSpeedLimit=${MIN_BYTES_PER_SECOND}`, '-c', `http.lowSpeedTime=${Math.max(1, Math.round(stallMs / 1000))}`];
    // Its own process group, so abort reaches index-pack and remote helpers.
    const { child, done } = startGit(args, { cwd: options.cwd, env, config: [...SOURCE_OPTIONS, ...lowSpeed, ...options.pin], detached: true });
    let stdout = '';
    let stderr = '';
    let aborted = false;
    let stalled = false;
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const onAbort = () => {
      aborted = true;
      kill();
    };
    // The watchdog for every transport (git:// has no low-speed limit of its own).
    const watch = stallWatch(stallMs, () => {
      stalled = true;
      kill();
    });
    const activity = gitActivity(watch);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let tooLarge = false;
    child.stdout.on('data', (c) => {
      watch.mark(c.length);
      if (tooLarge) return;
      // What git prints of the source (ls-remote's ref list) is held only up to a cap.
      if (stdout.length + c.length > MAX_OUTPUT) {
        tooLarge = true;
        kill();
      } else stdout += c;
    });
    child.stderr.on('data', (c) => {
      const text = String(c);
      stderr = (stderr + text).slice(-16384);
      activity(text);
      options.onStderr?.(text);
    });
    const finish = () => {
      watch.stop();
      options.signal?.removeEventListener('abort', onAbort);
    };
    // A failed spawn, or a pipe that breaks (startGit handles the streams' errors), ends this run, never the process.
    const failedToStart = (err: unknown) => {
      finish();
      kill();
      reject(err);
    };
    done.then(({ code }) => {
      finish();
      if (aborted) reject(new GitAbortedError('stopped'));
      else if (tooLarge)
        reject(new GitRunError({ kind: 'failed', message: `the source's answer is larger than ${MAX_OUTPUT / 1024 / 1024} MiB`, broken: false }));
      else if (stalled || (code !== 0 && readGitStderr(stderr).kind === 'stalled')) {
        reject(new StallError(`the source stalled: less than 1 KiB/s of data arrived for ${Math.round(stallMs / 1000)}s (IMPORT_STALL_TIMEOUT)`));
      } else if (code === 0) resolve(stdout);
      else reject(new GitRunError(describeGitFailure(stderr, options.credentials)));
    }, failedToStart);
  });
}

/** Local phases: our own git working on data already here, which no source can drag out. */
const LOCAL_WORK = new Set(['resolving_deltas', 'checking_connectivity']);

/**
 * Feeds a stall watch from git's stderr, whole lines only (a line cut between two reads
 * could lose its `remote: ` prefix). SECURITY: lines from the source (`remote: …`, side-band
 * progress) count for nothing, whatever they say: a source could send changing percents
 * forever and no data. What counts is the pack bytes our own git reports receiving
 * (`Receiving objects: … | 1.20 MiB`) and a new percent of its local work after the data.
 */
export function gitActivity(watch: { mark(bytes: number): void; touch(): void }): (text: string) => void {
  let partial = '';
  let bytes = 0;
  let last = '';
  return (text) => {
    const lines = (partial + text).split(/[\r\n]/);
    partial = lines.pop()!.slice(-4096);
    for (const line of lines) {
      if (line.startsWith('remote:')) continue;
      const p = parseGitProgress(line);
      if (!p) continue;
      if ((p.phase === 'receiving_objects' || p.phase === 'writing_objects') && p.bytes_received !== null) {
        watch.mark(Math.max(0, p.bytes_received - bytes));
        bytes = Math.max(bytes, p.bytes_received);
      } else if (LOCAL_WORK.has(p.phase) && `${p.phase} ${p.percent}` !== last) {
        last = `${p.phase} ${p.percent}`;
        watch.touch();
      }
    }
  };
}
