import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WHARF_BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'wharf.js');

const GUARD = new URL('./loopbackOnly.mjs', import.meta.url).href;

/**
 * The command and arguments that run `node <args>` as a user runs Wharf: with the loopback
 * guard and nothing of tap's. tap's process-info hook puts itself into every process a
 * test spawns (rewriting NODE_OPTIONS in the spawn itself), and it changes when the
 * garbage collector runs enough to hide a native driver's abort; a shell between resets
 * NODE_OPTIONS to the guard alone.
 */
export function asUserRuns(args: string[]): [string, string[], Record<string, string>] {
  return [
    '/bin/sh',
    ['-c', 'NODE_OPTIONS="$WHARF_TEST_NODE_OPTIONS" exec "$@"', 'sh', process.execPath, ...args],
    { WHARF_TEST_NODE_OPTIONS: `--import=${GUARD}` },
  ];
}

/** Runs the wharf CLI in a child process (with `input` on stdin, if given) and returns its exit code and output. */
export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const [command, argv, extra] = asUserRuns([WHARF_BIN, ...args]);
    const child = spawn(command, argv, { env: { ...process.env, ...extra, ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c) => (stdout += c));
    child.stderr!.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end(input);
  });
}
