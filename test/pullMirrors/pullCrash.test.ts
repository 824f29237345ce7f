import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess, type ServeProcess } from '../helpers/serveProcess.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { connect } from '../../src/db/connect.ts';
import { buildSource, startGitDaemon } from '../import/helpers.ts';
import { sourceProxy } from './pullProxy.ts';

/** `git ls-remote` of a repository as "sha ref" lines, peeled tags left out (for-each-ref lists none). */
const sourceRefs = async (g: ReturnType<typeof gitClient>, url: string) => refList(await g.ok(['ls-remote', url])).filter((l) => !l.endsWith('^{}'));

const visibleRefs = async (g: ReturnType<typeof gitClient>, dir: string) =>
  refList(await g.ok(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: dir })).filter((l) => !l.includes(' refs/wharf-mirror/'));

t.test(
  'a SIGKILL mid-sync leaves the refs old or new, never mixed, and the events arrive after the restart; a crash after the refs moved loses no event',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-mirror-crash-'));
    const database = await createTestDatabase(dir);
    t.teardown(async () => {
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const env = serveEnv(dir, database.url, {
      IMPORT_ALLOWED_HOSTS: 'loopback',
      SECRET_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_RETRY_SCHEDULE: '0s,500ms,1s,2s',
    });
    let node: ServeProcess = await startServeProcess(env, { t });
    const token = node.token!;
    const api = (method: string, p: string, body?: unknown) =>
      fetch(node.url + p, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => null)) as any }));
    const g = gitClient(t);
    const base = path.join(g.dir, 'built');
    fs.mkdirSync(base);
    const source = await buildSource(g, base);
    const daemon = await startGitDaemon(t, base);
    const proxy = await sourceProxy(t, daemon.port);
    const created = await api('POST', '/api/v1/repos/import', {
      source_url: `git://127.0.0.1:${proxy.port}/source.git`,
      target_org: 'demo',
      name: 'm',
      mirror: true,
    });
    t.equal(created.status, 202, JSON.stringify(created.body));
    await waitFor(async () => (await api('GET', `/api/v1/repos/import/${created.body.id}`)).body.status === 'succeeded', {
      timeoutMs: 60_000,
      what: 'the import',
    });
    const rx = await startReceiver(t);
    const hook = await api('POST', '/api/v1/repos/demo/m/webhooks', { url: `${rx.url}/push`, events: ['push'] });
    t.equal(hook.status, 201);
    const repo = path.join(dir, 'repos', 'demo', 'm.git');
    const oldRefs = await visibleRefs(g, repo);

    // Upstream work, then a sync whose fetch crawls; the node dies in the middle of it.
    const work = path.join(g.dir, 'work');
    await g.ok(['clone', '-q', source.bare, work]);
    await g.commit(work, 'bulk', { 'bulk.bin': randomBytes(64 * 1024) });
    await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
    await g.ok(['push', '-q', 'origin', 'trunk:refs/heads/side'], { cwd: work });
    await g.ok(['tag', 'v9', 'trunk'], { cwd: work });
    await g.ok(['push', '-q', 'origin', 'v9'], { cwd: work });
    const newRefs = await sourceRefs(g, source.bare);
    proxy.rate = 2048;
    const sent = proxy.bytes;
    t.equal((await api('POST', '/api/v1/repos/demo/m/mirror/sync')).status, 202);
    await waitFor(() => proxy.bytes > sent + 4096, { timeoutMs: 30_000, what: 'the sync to be fetching' });
    await node.kill();
    const atKill = await visibleRefs(g, repo);
    t.same(atKill, oldRefs, 'killed while fetching: the refs are as they were');
    proxy.rate = 0;

    node = await startServeProcess(env, { t });
    await waitFor(async () => JSON.stringify(await visibleRefs(g, repo)) === JSON.stringify(newRefs), {
      timeoutMs: 60_000,
      what: 'the sync after the restart',
    });
    const pushes = () => rx.received.filter((r) => r.event === 'push').map((r) => JSON.parse(r.body.toString('utf8')));
    await waitFor(() => new Set(pushes().map((p) => p.ref)).size >= 3, { timeoutMs: 30_000, what: 'three push events' });
    const byRef = new Map<string, Set<string>>();
    for (const r of rx.received.filter((r) => r.event === 'push')) {
      const p = JSON.parse(r.body.toString('utf8'));
      byRef.set(p.ref, (byRef.get(p.ref) ?? new Set()).add(r.guid));
    }
    t.same([...byRef.keys()].sort(), ['refs/heads/side', 'refs/heads/trunk', 'refs/tags/v9'], 'an event for each changed ref');
    t.ok(
      [...byRef.values()].every((guids) => guids.size === 1),
      'one event per ref (retries share the guid)',
    );

    // A crash between moving the refs and committing their push record: the state it leaves
    // (refs moved, the intent in `pending`, the lease of a dead node) is made here by hand.
    await node.kill();
    await g.commit(work, 'after the crash', { 'late.txt': 'late\n' });
    await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
    const before = (await visibleRefs(g, repo)).find((l) => l.endsWith(' refs/heads/trunk'))!.split(' ')[0];
    await g.ok(['fetch', '-q', '--no-tags', source.bare, '+refs/*:refs/wharf-mirror/*'], { cwd: repo });
    const after = (await g.ok(['rev-parse', 'refs/wharf-mirror/heads/trunk'], { cwd: repo })).trim();
    await g.ok(['update-ref', 'refs/heads/trunk', after, before], { cwd: repo });
    const db = connect(database.url);
    await db('repository_mirrors').update({ pending: `${before} ${after} refs/heads/trunk\n`, locked_by: 'vm:1:dead:dead', lease_expires_at: 0 });
    await db.destroy();
    node = await startServeProcess(env, { t });
    await waitFor(() => pushes().some((p) => p.ref === 'refs/heads/trunk' && p.after === after), {
      timeoutMs: 30_000,
      what: 'the event of the unfinished sync',
    });
    await waitFor(async () => (await api('GET', '/api/v1/repos/demo/m')).body.mirror.last_sync_status === 'succeeded', { what: 'the sync after it' });
    t.equal(pushes().filter((p) => p.ref === 'refs/heads/trunk' && p.after === after).length >= 1, true, 'delivered');
    t.equal(new Set(rx.received.filter((r) => r.event === 'push' && JSON.parse(r.body.toString('utf8')).after === after).map((r) => r.guid)).size, 1, 'once');
    t.same(await visibleRefs(g, repo), await sourceRefs(g, source.bare));
    await node.stop();
  },
);

t.test('two wharf serve nodes on one Postgres never sync the same mirror at once', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-mirror-nodes-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  if (database.dialect !== 'postgres') {
    t.comment('skipped: several processes share one database only on Postgres; set TEST_DATABASE_URL');
    t.pass('skipped on SQLite');
    return;
  }
  const key = randomBytes(32).toString('hex');
  const env = (name: string) => ({
    ...serveEnv(dir, database.url, { IMPORT_ALLOWED_HOSTS: 'loopback', SECRET_KEY: key }),
    DATA_DIR: path.join(dir, `data-${name}`),
  });
  const a = await startServeProcess(env('a'), { t });
  const token = a.token!;
  const b = await startServeProcess(env('b'), { t });
  const api = (node: ServeProcess, method: string, p: string, body?: unknown) =>
    fetch(node.url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => null)) as any }));
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const proxy = await sourceProxy(t, daemon.port);
  const created = await api(a, 'POST', '/api/v1/repos/import', {
    source_url: `git://127.0.0.1:${proxy.port}/source.git`,
    target_org: 'demo',
    name: 'm',
    mirror: true,
  });
  t.equal(created.status, 202);
  await waitFor(async () => (await api(a, 'GET', `/api/v1/repos/import/${created.body.id}`)).body.status === 'succeeded', {
    timeoutMs: 60_000,
    what: 'the import',
  });
  const work = path.join(g.dir, 'work');
  await g.ok(['clone', '-q', source.bare, work]);
  proxy.rate = 4096;
  proxy.maxOpen = 0;
  const start = proxy.connections;
  // Many requests to both nodes while syncs crawl: each is absorbed or queues one more sync.
  for (let i = 0; i < 6; i++) {
    await g.commit(work, `round ${i}`, { [`r${i}.txt`]: randomBytes(4096).toString('hex') });
    await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
    const [x, y] = await Promise.all([api(a, 'POST', '/api/v1/repos/demo/m/mirror/sync'), api(b, 'POST', '/api/v1/repos/demo/m/mirror/sync')]);
    t.same([x.status, y.status], [202, 202]);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await waitFor(async () => (await api(b, 'GET', '/api/v1/repos/demo/m')).body.mirror.next_sync_at > new Date(Date.now() + 60_000).toISOString(), {
    timeoutMs: 60_000,
    what: 'the last sync to end',
  });
  // A request that came while a sync ran was absorbed by it (which may have fetched before the last push): one more.
  t.equal((await api(b, 'POST', '/api/v1/repos/demo/m/mirror/sync')).status, 202);
  await waitFor(
    async () =>
      JSON.stringify(refList(await g.ok(['ls-remote', `${a.url.replace('http://', `http://x:${token}@`)}/demo/m.git`]))) ===
      JSON.stringify(refList(await g.ok(['ls-remote', source.bare]))),
    { timeoutMs: 60_000, what: 'the mirror to catch up' },
  );
  t.ok(proxy.connections - start >= 2, `several syncs ran (${proxy.connections - start} fetches)`);
  t.equal(proxy.maxOpen, 1, 'never two fetches of the source at once');
});
