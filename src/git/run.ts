import { execFile, spawn } from 'node:child_process';

/**
 * Options that precede every git subcommand Wharf runs. Hooks are off: a repository
 * (an imported one above all) must never run hooks of its own; the smart-HTTP route
 * turns on Wharf's own hooks directory explicitly.
 */
export const SAFE_GIT_OPTIONS = ['-c', 'core.hooksPath=/dev/null'];

/** Environment for every git child process: no prompts, no user or system config surprises. */
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

/** Runs git with arguments (never a shell) and returns stdout; rejects with stderr on a non-zero exit. */
export function git(args: string[], options: { cwd?: string; env?: Record<string, string>; maxBuffer?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', [...SAFE_GIT_OPTIONS, ...args], { cwd: options.cwd, env: gitEnv(options.env), maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(gitError(args, String(stderr), (err as any).code));
      else resolve(stdout);
    });
  });
}

function gitError(args: string[], stderr: string, exitCode: unknown): Error {
  return Object.assign(new Error(`git ${args[0]} failed: ${stderr.trim()}`), { stderr, exitCode });
}

/**
 * Runs git feeding `input` to its stdin and calls `onData` with each stdout chunk as
 * it arrives, so long outputs (rev-list of a whole history) are never held twice.
 * Resolves when git exits 0; rejects with its stderr otherwise.
 */
export function gitPiped(args: string[], input: string | Buffer, onData: (chunk: Buffer) => void, options: { cwd?: string } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...SAFE_GIT_OPTIONS, ...args], { cwd: options.cwd, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.on('data', onData);
    child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-8192)));
    // git may exit before reading all of stdin (an error); the exit code tells what happened.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(gitError(args, stderr, code))));
  });
}

/** Runs git with stdin input and returns its whole stdout as a Buffer. */
export async function gitBuffer(args: string[], input: string | Buffer, options: { cwd?: string } = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await gitPiped(args, input, (c) => chunks.push(c), options);
  return Buffer.concat(chunks);
}
