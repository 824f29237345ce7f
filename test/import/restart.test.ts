import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { connect } from '../../src/db/connect.ts';
import { startServeProcess } from '../helpers/serveProcess.ts';
import { waitFor } from '../helpers/wait.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { addBulk, buildSource, freePort, startGitDaemon, startProxy } from './helpers.ts';

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
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    IMPORT_ALLOWED_HOSTS: 'loopback',
  };
  const api = async (method: string, url: string, token: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  const first = await startServeProcess(env, { t, timeoutMs: 30_000 });
  const token = first.token!;
  const created = await api('POST', '/api/v1/repos/import', token, {
    source_url: `git://127.0.0.1:${proxy.port}/big.git`,
    target_org: 'demo',
    name: 'survivor',
  });
  t.equal(created.status, 202);
  await waitFor(
    async () => {
      const job = (await api('GET', `/api/v1/repos/import/${created.body.id}`, token)).body;
      return job.status === 'cloning' && job.progress.bytes_received > 0 && job;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: 'the import to receive its first bytes' },
  );
  await first.kill();
  proxy.rate = 0; // the second attempt may go at full speed

  const second = await startServeProcess(env, { t, timeoutMs: 30_000 });
  const job: any = await waitFor(
    async () => {
      const answer = (await api('GET', `/api/v1/repos/import/${created.body.id}`, token)).body;
      return answer.finished_at && answer;
    },
    { timeoutMs: 120_000, intervalMs: 100, what: 'the import to be resumed and finish' },
  );
  t.equal(job.status, 'succeeded', job.error);
  t.same(refList(await g.ok(['ls-remote', path.join(dir, 'repos', 'demo', 'survivor.git')])), refList(await g.ok(['ls-remote', daemon.url('big')])));
  const db = connect(database.url);
  const row = await db('import_jobs').where('id', created.body.id).first();
  await db.destroy();
  t.equal(row.attempts, 2, 'taken up by the restarted process as a second attempt');
  t.equal(row.credentials, null);
  await second.stop();
});
