import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { buildUser, startWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { quietPeriod, waitFor } from '../helpers/wait.ts';
import { repoDir } from '../../src/git/bare.ts';
import { buildSource, startGitDaemon, waitForJob } from '../import/helpers.ts';
import { sourceProxy } from './pullProxy.ts';

t.test('a cutover while a sync is fetching: 200 at once, and that sync moves no ref and raises no event afterwards', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const proxy = await sourceProxy(t, daemon.port);
  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: `git://127.0.0.1:${proxy.port}/source.git`, target_org: 'demo', name: 'm', mirror: true, mirror_interval: '1m' },
  });
  t.equal((await waitForJob(w, created.body.id, { token })).status, 'succeeded');
  t.equal((await w.api('GET', '/api/v1/repos/demo/m', { token })).body.mirror.interval, '1m');
  // A member who is not an owner may neither sync nor cut over.
  const { token: member } = await buildUser(w, 'mia', { org: 'demo', role: 'member' });
  t.equal((await w.api('POST', '/api/v1/repos/demo/m/mirror/sync', { token: member })).status, 403);
  t.equal((await w.api('DELETE', '/api/v1/repos/demo/m/mirror', { token: member })).status, 403);

  const dir = repoDir(w.config.reposDir, 'demo', 'm');
  const before = refList(await g.ok(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], { cwd: dir }));
  const work = path.join(g.dir, 'work');
  await g.ok(['clone', '-q', source.bare, work]);
  await g.commit(work, 'bulk', { 'bulk.bin': randomBytes(96 * 1024) });
  await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
  proxy.rate = 2048;
  const sent = proxy.bytes;
  t.equal((await w.api('POST', '/api/v1/repos/demo/m/mirror/sync', { token })).status, 202);
  await waitFor(() => proxy.bytes > sent + 4096, { timeoutMs: 30_000, what: 'the sync to be fetching' });
  const cut = await w.api('DELETE', '/api/v1/repos/demo/m/mirror', { token });
  t.equal(cut.status, 200, cut.text);
  t.equal(cut.body.mirror, null);
  proxy.rate = 0;
  await quietPeriod(3000); // the runner's polls: a stopped sync must not come back
  t.same(
    refList(await g.ok(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], { cwd: dir })),
    before,
    'no ref moved after the cutover',
  );
  t.equal(await g.ok(['for-each-ref', 'refs/wharf-mirror/'], { cwd: dir }), '', 'nothing staged left');
  t.equal(Number((await w.running.services.db('push_records').count({ n: '*' }))[0].n), 0, 'no push record');
  t.equal(Number((await w.running.services.db('events').count({ n: '*' }))[0].n), 0, 'no event');
  // An ordinary repository now: a push lands.
  const clone = path.join(g.dir, 'clone');
  await g.ok(['clone', '-q', repoUrl(w, 'demo/m', token), clone]);
  await g.commit(clone, 'mine now', { 'mine.txt': 'x\n' });
  await g.ok(['push', '-q', 'origin', 'HEAD:refs/heads/mine'], { cwd: clone });
  await w.pushesRecorded();
  t.ok(refList(await g.ok(['ls-remote', repoUrl(w, 'demo/m', token)])).some((l) => l.endsWith(' refs/heads/mine')));
});

t.test('a mirror whose node died during 3 syncs is parked: no scheduled sync, said in last_error; a sync request starts it again', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: daemon.url('source'), target_org: 'demo', name: 'p', mirror: true },
  });
  t.equal((await waitForJob(w, created.body.id, { token })).status, 'succeeded');
  // What three deaths mid-sync leave: a lease of a dead node, counted twice already (the claim counts the third).
  await w.running.services.db('repository_mirrors').update({ interruptions: 2, locked_by: 'vm:1:dead:dead', lease_expires_at: 0, next_sync_at: 0 });
  const parked = await waitFor(
    async () => {
      const m = (await w.api('GET', '/api/v1/repos/demo/p', { token })).body.mirror;
      return m.last_error?.startsWith('parked:') && m;
    },
    { timeoutMs: 30_000, what: 'the mirror to be parked' },
  );
  t.match(parked, { last_sync_status: 'failed', next_sync_at: null });
  const requested = Date.now();
  t.equal((await w.api('POST', '/api/v1/repos/demo/p/mirror/sync', { token })).status, 202);
  const again = await waitFor(
    async () => {
      const m = (await w.api('GET', '/api/v1/repos/demo/p', { token })).body.mirror;
      return m.last_sync_status === 'succeeded' && Date.parse(m.last_sync_at) >= requested && m;
    },
    { timeoutMs: 30_000, what: 'the requested sync' },
  );
  t.equal(again.last_error, null);
  t.ok(again.next_sync_at, 'scheduled again');
});
