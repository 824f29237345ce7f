import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import type { TestLike } from './wharf.ts';
import { waitFor } from './wait.ts';

/** Whether strace is installed (.ci/run installs it; without it the tests that read system calls skip). */
export const HAS_STRACE = spawnSync('strace', ['-V']).status === 0;

/** The calls that write files to disk or give them their names. */
export const FILE_CALLS = 'trace=fsync,fdatasync,link,linkat,rename,renameat,renameat2';

/**
 * Attaches strace to a running process, every thread of it and every process it starts
 * from now on, and records its file calls (fsync, link, rename) with the paths of their
 * descriptors (or the `calls` named, in strace's `-e` form; `-yy` names a socket's kind and ends too). `stop` detaches and returns the
 * lines, in the order they were made.
 */
export async function traceFileCalls(t: TestLike, pid: number, dir: string, calls = FILE_CALLS, yFlag = '-y'): Promise<{ stop(): Promise<string[]> }> {
  const log = path.join(dir, `strace-${pid}.log`);
  const tracer = spawn('strace', ['-f', yFlag, '-e', calls, '-o', log, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  const ended = new Promise((resolve) => tracer.on('close', resolve));
  t.teardown(() => void tracer.kill('SIGKILL'));
  let said = '';
  tracer.stderr!.on('data', (c) => (said += c));
  await waitFor(() => /attached/.test(said), { timeoutMs: 10_000, what: 'strace to attach' });
  return {
    async stop() {
      tracer.kill('SIGINT'); // detaches; the log is complete once it exits
      await ended;
      return fs.readFileSync(log, 'utf8').split('\n');
    },
  };
}

/**
 * Whether each file was written to disk (fsync or fdatasync) in `lines`, under its own
 * name or any it had before: git writes a pack as tmp_pack_* and links it to its name,
 * and renames lock files into place. Relative names are taken from `cwd` (the folder the
 * calls were made in).
 */
export function syncedIn(lines: string[], cwd = '/'): (file: string) => boolean {
  const named = (file: string) => path.resolve(cwd, file);
  // A call cut off by another thread's is printed as `fsync(3</path> <unfinished ...>`, its result later.
  const synced = new Set(
    lines
      .map((line) => /f(?:data)?sync\(\d+<([^>]+)>(?:\) = 0| <unfinished)/.exec(line)?.[1])
      .filter((file): file is string => Boolean(file))
      .map(named),
  );
  const earlier = new Map(
    lines.flatMap((line) =>
      [...line.matchAll(/(?:link|rename)(?:at2?)?\((?:\d+<[^>]*>, )?"([^"]+)", (?:\d+<[^>]*>, )?"([^"]+)"/g)].map((m) => [named(m[2]), named(m[1])] as const),
    ),
  );
  return (file) => {
    for (let name: string | undefined = named(file), hops = 0; name && hops < 10; name = earlier.get(name), hops++) if (synced.has(name)) return true;
    return false;
  };
}
