import { spawn } from 'node:child_process';
import net from 'node:net';
import type { TestLike } from '../helpers/wharf.ts';

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

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}

/** Serves the bare repositories under `base` with `git daemon` on loopback; returns its git:// base URL. */
export async function startGitDaemon(t: TestLike, base: string): Promise<string> {
  const port = await freePort();
  const child = spawn('git', ['daemon', '--reuseaddr', '--export-all', `--base-path=${base}`, '--listen=127.0.0.1', `--port=${port}`, base], { stdio: 'ignore' });
  t.teardown(() => {
    child.kill();
  });
  for (let i = 0; i < 200 && !(await accepting(port)); i++) await new Promise((r) => setTimeout(r, 50));
  return `git://127.0.0.1:${port}`;
}
