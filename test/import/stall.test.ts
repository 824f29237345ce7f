import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { buildUser, startWharf, type TestLike } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { buildSource, startGitDaemon, waitForJob } from './helpers.ts';

/** An HTTP source that answers every request at once, then sends its body one byte every 0.7 s, forever. */
async function slowDrip(t: TestLike): Promise<string> {
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement', 'cache-control': 'no-cache' });
    const timer = setInterval(() => res.write('0'), 700);
    timers.add(timer);
    res.on('close', () => (clearInterval(timer), timers.delete(timer)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as any).port}`;
}

t.test('a slow-drip source fails within the stall time, with a clear error', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '3s' } });
  const drip = await slowDrip(t);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const started = Date.now();
  const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: `${drip}/team/slow.git`, target_org: 'demo', name: 'slow' } });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id, { token, timeoutMs: 45_000 });
  t.equal(job.status, 'failed');
  t.match(job.error, /stalled/);
  t.ok(Date.now() - started < 40_000, `failed after ${Date.now() - started} ms, not after git's two minutes`);
});

t.test("one organization's stalled imports do not keep another organization's import queued", async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_CONCURRENCY: '2', IMPORT_STALL_TIMEOUT: '10m' } });
  const drip = await slowDrip(t);
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const evil = await buildUser(w, 'eve', { org: 'evil', role: 'owner' });
  const acme = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const slow = [];
  for (const name of ['drip-1', 'drip-2']) {
    const created = await w.api('POST', '/api/v1/repos/import', { token: evil.token, body: { source_url: `${drip}/${name}.git`, target_org: 'evil', name } });
    t.equal(created.status, 202, created.text);
    slow.push(created.body.id);
  }
  await waitForJob(w, slow[0], { token: evil.token, done: (j) => j.status === 'cloning', timeoutMs: 20_000 });
  const created = await w.api('POST', '/api/v1/repos/import', { token: acme.token, body: { source_url: daemon.url('source'), target_org: 'acme', name: 'copy' } });
  const job = await waitForJob(w, created.body.id, { token: acme.token, timeoutMs: 45_000 });
  t.equal(job.status, 'succeeded', 'the other organization got a slot');
  const states = await Promise.all(slow.map(async (id) => (await w.api('GET', `/api/v1/repos/import/${id}`, { token: evil.token })).body.status));
  t.same(states.sort(), ['cloning', 'queued'], 'evil holds one slot of two; its second import waits');
  for (const id of slow) await w.api('DELETE', `/api/v1/repos/import/${id}`, { token: evil.token });
});
