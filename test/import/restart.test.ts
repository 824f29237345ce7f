import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { connect } from '../../src/db/connect.ts';
import { WHARF_BIN } from '../helpers/cli.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { addBulk, buildSource, freePort, startGitDaemon, startProxy } from './helpers.ts';

/** Starts `wharf serve` as its own process; resolves once it listens, with the admin token of a first start. */
function serve(env: Record<string, string>, expectToken: boolean): Promise<{ child: ChildProcess; token: string | null }> {
  const child = spawn(process.execPath, [WHARF_BIN, 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (c) => {
      out += c;
      const token = /Admin token[^:]*: (wharf_\S+)\n/.exec(out)?.[1] ?? null;
      if (/listening on .*\n/.test(out) && (token || !expectToken)) {
        clearTimeout(timer);
        resolve({ child, token });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

t.test('a server killed with SIGKILL mid-import takes the job up again after restart', async (t) => {
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await buildSource(g, base, 'big', (work) => addBulk(g, work, 30, 64 * 1024));
  const daemon = await startGitDaemon(t, base);
  const proxy = await startProxy(t, daemon.port, { rate: 8 * 1024 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-restart-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const port = await freePort();
  const env = {
    HOST: '127.0.0.1', PORT: String(port), DATA_DIR: path.join(dir, 'data'), REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url, LOG_LEVEL: 'warn', IMPORT_ALLOWED_HOSTS: 'loopback',
  };
  const api = async (method: string, url: string, token: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as any };
  };

  const first = await serve(env, true);
  t.teardown(() => first.child.kill('SIGKILL'));
  const token = first.token!;
  const created = await api('POST', '/api/v1/repos/import', token, { source_url: `git://127.0.0.1:${proxy.port}/big.git`, target_org: 'demo', name: 'survivor' });
  t.equal(created.status, 202);
  for (let i = 0; ; i++) {
    const job = (await api('GET', `/api/v1/repos/import/${created.body.id}`, token)).body;
    if (job.status === 'cloning' && job.progress.bytes_received > 0) break;
    if (i > 600) throw new Error(`never started: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  first.child.kill('SIGKILL');
  await exited;
  proxy.rate = 0; // the second attempt may go at full speed

  const second = await serve(env, false);
  t.teardown(() => second.child.kill('SIGKILL'));
  let job: any;
  for (let i = 0; ; i++) {
    job = (await api('GET', `/api/v1/repos/import/${created.body.id}`, token)).body;
    if (job.finished_at) break;
    if (i > 1200) throw new Error(`not resumed: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(job.status, 'succeeded', job.error);
  t.same(refList(await g.ok(['ls-remote', path.join(dir, 'repos', 'demo', 'survivor.git')])), refList(await g.ok(['ls-remote', daemon.url('big')])));
  const db = connect(database.url);
  const row = await db('import_jobs').where('id', created.body.id).first();
  await db.destroy();
  t.equal(row.attempts, 2, 'taken up by the restarted process as a second attempt');
  t.equal(row.credentials, null);
  const stopped = new Promise((resolve) => second.child.once('exit', resolve));
  second.child.kill('SIGTERM');
  await stopped;
});
