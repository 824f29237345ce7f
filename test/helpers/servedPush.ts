import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { createTestDatabase } from './database.ts';
import { serveEnv, startServeProcess } from './serveProcess.ts';
import { gitClient } from './git.ts';

/**
 * A real `wharf serve` (a process of its own, so strace can follow it) on a fresh database
 * in a temporary folder `dir` (its DATA_DIR is `dir/data`), a git client with an empty work
 * tree on main, and the push URL of demo/app with the admin's token.
 */
export async function servedPush(t: Test, name: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `wharf-${name}-`));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const node = await startServeProcess(serveEnv(dir, database.url), { t, timeoutMs: 30_000 });
  const g = gitClient(t);
  const work = path.join(g.dir, 'app');
  await g.ok(['init', '-q', '-b', 'main', work]);
  const url = new URL(`${node.url}/demo/app.git`);
  url.username = 'x';
  url.password = node.token!;
  return { dir, database, node, g, work, url: url.toString() };
}
