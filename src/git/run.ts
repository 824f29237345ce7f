import { execFile } from 'node:child_process';

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
    execFile('git', args, { cwd: options.cwd, env: gitEnv(options.env), maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(`git ${args[0]} failed: ${String(stderr).trim()}`), { stderr: String(stderr), exitCode: (err as any).code }));
      else resolve(stdout);
    });
  });
}
