import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import type { TestLike, TestWharf } from '../helpers/wharf.ts';

/** Another Wharf process's worth of server on the same database as `w` (its own config), stopped when the test ends. */
export async function startSibling(t: TestLike, w: TestWharf, env: Record<string, string>): Promise<RunningServer & { logs: string[] }> {
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: `${w.dir}/data`,
    REPOS_DIR: `${w.dir}/repos`,
    DATABASE_URL: w.database.url,
    LOG_LEVEL: 'info',
    ...env,
  });
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const running = await startServer(config, { logDestination });
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= running.stop());
  // Registered after startWharf's teardown, so it runs... either way stop() is idempotent; tests also stop it themselves.
  t.teardown(stop);
  return { ...running, stop, logs };
}
