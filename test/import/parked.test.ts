import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serveProcess.ts';
import { connect } from '../../src/db/connect.ts';
import { buildUser, type TestLike } from '../helpers/wharf.ts';
import { openBrowser, signIn, startUiWharf } from '../ui/browser.ts';
import { waitForJob } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { wake } from '../../src/services.ts';

/** An HTTP "source" that answers at once and then sends a byte every 0.5 s forever: a run that never ends by itself. */
async function endlessSource(t: TestLike): Promise<string> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
    const timer = setInterval(() => res.write('0'), 500);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (server.closeAllConnections(), server.close()));
  return `http://127.0.0.1:${(server.address() as any).port}`;
}

t.test('an import whose node is killed 3 times while it runs is parked on the next start: failed, never run again', async (t) => {
  const source = await endlessSource(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-parked-'));
  const database = await createTestDatabase(dir);
  const db = connect(database.url);
  let node: ServeProcess | undefined;
  t.teardown(async () => {
    node?.child.kill('SIGKILL');
    await node?.exited;
    await db.destroy();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'error',
    IMPORT_ALLOWED_HOSTS: 'loopback',
    IMPORT_STALL_TIMEOUT: '10m',
  };
  node = await startServeProcess(env);
  const token = node.token!;
  const api = async (url: string, p: string, method = 'GET', body?: unknown) => {
    const res = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const created = await api(node.url, '/api/v1/repos/import', 'POST', { source_url: `${source}/team/endless.git`, target_org: 'demo', name: 'endless' });
  t.equal(created.status, 202, created.text);
  const id = JSON.parse(created.text).id;
  const row = () => db('import_jobs').where('id', id).first();
  const runningOn = (pid: number) =>
    waitFor(
      async () => {
        const r = await row();
        return r.status === 'cloning' && String(r.locked_by).includes(`:${pid}:`) && r;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: `the job to run on ${pid}` },
    );
  for (let kill = 1; kill <= 3; kill++) {
    const r = await runningOn(node.child.pid!);
    t.equal(r.interruptions, kill - 1, `run ${kill} starts after ${kill - 1} interruptions`);
    node.child.kill('SIGKILL');
    await node.exited;
    node = await startServeProcess(env);
  }
  const job: any = await waitFor(
    async () => {
      const answer = JSON.parse((await api(node!.url, `/api/v1/repos/import/${id}`)).text);
      return answer.finished_at && answer;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: 'the job to finish' },
  );
  t.equal(job.status, 'failed', 'parked: ended failed');
  t.match(job.error, /^parked: the node running this import stopped 3 times while it ran/);
  const parked = await row();
  t.equal(parked.interruptions, 3);
  t.equal(parked.attempts, 4, 'the fourth claim parked it instead of running it');
  t.equal(parked.locked_by, null);
  t.equal(parked.credentials, null);
  const metrics = await (await fetch(`${node.url}/metrics`)).text();
  t.match(metrics, /^wharf_parked\{kind="import"\} 1$/m);
  t.equal(node.child.exitCode, null, 'the node is up');
});

t.test(
  'a job whose lease ran out on another node counts an interruption; the third is parked by the real claim, shown in the API, UI and metrics',
  async (t) => {
    const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, config: {} });
    const db = w.running.services.db;
    const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
    const org = await db('orgs').where('name', 'demo').first();
    const now = Date.now();
    // Left behind by a node of another host that died mid-run: locked, its lease expired.
    const base = {
      target_org_id: org.id,
      visibility: 'private',
      strategy: 'full',
      status: 'cloning',
      phase: 'receiving_objects',
      run_after: 0,
      started_at: now - 60_000,
      created_at: now - 60_000,
      updated_at: now - 30_000,
      locked_by: 'elsewhere:4242:dead',
      lease_expires_at: now - 10_000,
    };
    const [a] = await db('import_jobs')
      .insert({ ...base, source_url: 'http://127.0.0.1:9/a.git', name: 'again', attempts: 1, interruptions: 0 })
      .returning('id');
    const [b] = await db('import_jobs')
      .insert({ ...base, source_url: 'http://127.0.0.1:9/b.git', name: 'doomed', attempts: 3, interruptions: 2 })
      .returning('id');
    const ids = [a, b].map((x: any) => Number(typeof x === 'object' ? x.id : x));
    wake(w.running.services).imports();
    const doomed = await waitForJob(w, ids[1], { token, timeoutMs: 30_000 });
    t.equal(doomed.status, 'failed');
    t.match(doomed.error, /^parked: the node running this import stopped 3 times/);
    const again = await waitForJob(w, ids[0], { token, timeoutMs: 30_000 });
    t.equal(again.status, 'failed', 'the other job ran (and failed on its closed port), not parked');
    t.notMatch(again.error, /parked/);
    const rows = await db('import_jobs').whereIn('id', ids).orderBy('id');
    t.same(
      rows.map((r: any) => r.interruptions),
      [1, 3],
      'each takeover of an expired lease counted once',
    );
    t.match(await (await fetch(`${w.url}/metrics`)).text(), /^wharf_parked\{kind="import"\} 1$/m);
    t.ok(
      w.logs.some((l) => /"level":50/.test(l) && /import parked/.test(l)),
      'an error line says so',
    );
    const { page } = await openBrowser(t);
    await signIn(page, w, token);
    await page.goto(`${w.url}/-/import/${ids[1]}`);
    t.match(await page.textContent('main'), /Import failed[\s\S]*parked: the node running this import stopped 3 times/);
  },
);
