import { startGit } from './run.ts';

/** How a bounded read of git's output ended. */
export interface BoundedEnd {
  /** The reader asked to stop (a limit was reached) and git was killed. */
  stopped: boolean;
  /** git ran past the deadline and was killed. */
  timedOut: boolean;
}

/**
 * Runs git and hands each record of its stdout (split at `separator`: '\n' or '\0') to
 * `onRecord`, which returns false to stop: git is then killed, so a page reading the
 * first part of a huge output (a diff of 100,000 files) never waits for, or holds, the rest.
 * Past `deadlineMs` git is killed too. Rejects when git exits non-zero on its own.
 */
export async function readGitRecords(
  args: string[],
  separator: '\n' | '\0',
  onRecord: (record: string) => boolean | void,
  options: { cwd: string; deadlineMs?: number },
): Promise<BoundedEnd> {
  const { child, done } = startGit(args, { cwd: options.cwd });
  const sep = separator.charCodeAt(0);
  let rest = Buffer.alloc(0);
  let stopped = false;
  let timedOut = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    child.stdout.removeAllListeners('data');
    child.stdout.resume();
    child.kill('SIGKILL');
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.deadlineMs ?? 10_000);
  child.stdout.on('data', (chunk: Buffer) => {
    let buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0;
    for (let end = buf.indexOf(sep, start); end >= 0; end = buf.indexOf(sep, start)) {
      if (onRecord(buf.toString('utf8', start, end)) === false) return stop();
      start = end + 1;
    }
    buf = buf.subarray(start);
    rest = Buffer.from(buf);
  });
  const { code, stderr } = await done.finally(() => clearTimeout(timer));
  if (!stopped) {
    if (code !== 0) throw Object.assign(new Error(`git ${args[0]} failed: ${stderr.trim()}`), { stderr, exitCode: code });
    if (rest.length) onRecord(rest.toString('utf8'));
  }
  return { stopped, timedOut };
}
