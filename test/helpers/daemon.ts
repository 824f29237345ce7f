import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import type { TestLike } from './wharf.ts';
import { waitFor } from './wait.ts';

/** A free loopback port (closed again before use, as git daemon binds it itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Waits until something accepts connections on a loopback port. */
export async function waitForPort(port: number, host = '127.0.0.1'): Promise<void> {
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const c = net.connect(port, host);
      c.once('connect', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
  await waitFor(accepts, { timeoutMs: 10_000, intervalMs: 50, what: `something to listen on ${host}:${port}` });
}

/** Serves every repository under `base` with `git daemon` on a loopback port; stopped when the test ends. */
export async function startGitDaemon(t: TestLike, base: string): Promise<{ url: (name: string) => string; port: number }> {
  const port = await freePort();
  // The daemon program itself, not the `git daemon` wrapper: killing the wrapper would orphan it.
  const execPath = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim();
  const child = spawn(
    path.join(execPath, 'git-daemon'),
    ['--export-all', `--base-path=${base}`, '--reuseaddr', '--listen=127.0.0.1', `--port=${port}`, '--informative-errors', base],
    {
      stdio: 'ignore',
      env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: '1' },
    },
  );
  t.teardown(() => child.kill('SIGKILL'));
  await waitForPort(port);
  return { port, url: (name) => `git://127.0.0.1:${port}/${name}.git` };
}
