import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createHmac } from 'node:crypto';
import t from 'tap';
import { buildUser, startWharf, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { waitFor, quietPeriod } from '../helpers/wait.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { createRepository } from '../../src/domain/repos.ts';
import { repoDir } from '../../src/git/bare.ts';
import { buildSource, freePort, lfsFile, startGitDaemon, uploadLfs, waitForJob } from '../import/helpers.ts';

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: any;
  signed: boolean;
}

/** A webhook receiver on loopback that checks each delivery's signature. */
async function receiver(t: TestLike, secret: string): Promise<{ url: string; got: Delivery[] }> {
  const got: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const expected = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
      if (req.headers['x-service-event'] !== 'push') return void res.end('ok'); // the ping on creation
      got.push({ headers: req.headers, body: JSON.parse(raw.toString('utf8')), signed: req.headers['x-service-signature'] === expected });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as any).port}/hook`, got };
}

async function mirrorState(w: TestWharf, fullName: string, token: string): Promise<any> {
  const answer = await w.api('GET', `/api/v1/repos/${fullName}`, { token });
  if (answer.status !== 200) throw new Error(`GET ${fullName}: ${answer.status} ${answer.text}`);
  return answer.body.mirror;
}

/** Waits for a sync that ends after `after` (ms) and returns the mirror state. */
async function syncedAfter(w: TestWharf, fullName: string, token: string, after: number, status = 'succeeded'): Promise<any> {
  return waitFor(
    async () => {
      const m = await mirrorState(w, fullName, token);
      return m && m.last_sync_at && Date.parse(m.last_sync_at) > after && m.last_sync_status === status && m;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `a sync of ${fullName} ending ${status}` },
  );
}

t.test('a mirror of a git daemon source: sync on request and by schedule, events per changed ref, pushes refused, a failing source, the cutover', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base, 'source', async (work) => {
    await g.ok(['checkout', '-q', '-b', 'rewrite'], { cwd: work });
    await g.commit(work, 'to be rewritten', { 'r.txt': 'one\n' });
    await g.ok(['checkout', '-q', 'trunk'], { cwd: work });
  });
  const daemon = await startGitDaemon(t, base);
  const sourceUrl = daemon.url('source');

  // Validation: 422 for a bad interval and for an interval without mirror.
  for (const body of [
    { source_url: sourceUrl, target_org: 'demo', name: 'bad', mirror: true, mirror_interval: '30s' },
    { source_url: sourceUrl, target_org: 'demo', name: 'bad', mirror: true, mirror_interval: 'soon' },
    { source_url: sourceUrl, target_org: 'demo', name: 'bad', mirror_interval: '10m' },
  ]) {
    const refused = await w.api('POST', '/api/v1/repos/import', { token, body });
    t.equal(refused.status, 422, refused.text);
    t.equal(refused.body.error.details[0].path, '/mirror_interval');
  }

  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: sourceUrl, target_org: 'demo', name: 'mirror', mirror: true, mirror_interval: '10m' },
  });
  t.equal(created.status, 202, created.text);
  t.equal((await waitForJob(w, created.body.id, { token })).status, 'succeeded');
  const first = await mirrorState(w, 'demo/mirror', token);
  t.match(first, { source_url: sourceUrl, interval: '10m', last_sync_status: 'succeeded', last_error: null });
  t.equal(Date.parse(first.next_sync_at) - Date.parse(first.last_sync_at), 600_000, 'the next sync is an interval after the import');

  const hookSecret = 'mirror-hook-secret';
  const hooks = await receiver(t, hookSecret);
  const hook = await w.api('POST', '/api/v1/repos/demo/mirror/webhooks', { token, body: { url: hooks.url, secret: hookSecret, events: ['push'] } });
  t.equal(hook.status, 201, hook.text);

  // Upstream work: a commit on trunk, a new branch, a deleted branch, a forced update, a new tag.
  const work = path.join(g.dir, 'upstream-work');
  await g.ok(['clone', '-q', source.bare, work]);
  await g.commit(work, 'more on trunk', { 'more.txt': 'more\n' });
  await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'newb'], { cwd: work });
  await g.commit(work, 'new branch', { 'newb.txt': 'b\n' });
  await g.ok(['push', '-q', 'origin', 'newb'], { cwd: work });
  await g.ok(['push', '-q', 'origin', ':feature/x'], { cwd: work });
  await g.ok(['checkout', '-q', '-B', 'rewrite', 'origin/trunk'], { cwd: work });
  await g.commit(work, 'rewritten', { 'r.txt': 'two\n' });
  await g.ok(['push', '-q', '--force', 'origin', 'rewrite'], { cwd: work });
  await g.ok(['tag', 'v2.0', 'trunk'], { cwd: work });
  await g.ok(['push', '-q', 'origin', 'v2.0'], { cwd: work });

  const before = Date.now();
  const sync = await w.api('POST', '/api/v1/repos/demo/mirror/mirror/sync', { token });
  t.equal(sync.status, 202, sync.text);
  t.equal(sync.body.source_url, sourceUrl);
  await syncedAfter(w, 'demo/mirror', token, before);
  const mirrorUrl = repoUrl(w, 'demo/mirror', token);
  t.same(refList(await g.ok(['ls-remote', mirrorUrl])), refList(await g.ok(['ls-remote', source.bare])), "the mirror's refs equal the source's");

  await w.pushesRecorded();
  await waitFor(() => hooks.got.length >= 5, { timeoutMs: 30_000, what: 'five push deliveries' });
  await quietPeriod(500);
  t.equal(hooks.got.length, 5, 'exactly one push event per changed ref');
  t.ok(
    hooks.got.every((d) => d.signed && d.headers['x-service-event'] === 'push'),
    'every delivery signed',
  );
  const byRef = Object.fromEntries(hooks.got.map((d) => [d.body.ref, d.body]));
  t.match(byRef['refs/heads/trunk'], { created: false, deleted: false, forced: false });
  // Listed once, by the first event in ref order whose new history reaches it (newb branched after it).
  t.equal(hooks.got.flatMap((d) => d.body.commits).filter((c: any) => c.message.startsWith('more on trunk')).length, 1, 'the new commit listed once');
  t.match(byRef['refs/heads/newb'], { created: true, deleted: false });
  t.match(byRef['refs/heads/feature/x'], { created: false, deleted: true });
  t.match(byRef['refs/heads/rewrite'], { created: false, deleted: false, forced: true });
  t.match(byRef['refs/tags/v2.0'], { created: true, deleted: false });

  // A push to the mirror is refused, naming the source, and changes nothing.
  const refsBefore = refList(await g.ok(['ls-remote', mirrorUrl]));
  const clone = path.join(g.dir, 'mirror-clone');
  await g.ok(['clone', '-q', mirrorUrl, clone]);
  await g.commit(clone, 'pushed to the mirror', { 'nope.txt': 'x\n' });
  const refused = await g.run(['push', 'origin', 'HEAD:refs/heads/pushed'], { cwd: clone });
  t.not(refused.code, 0, 'the push fails');
  t.match(refused.stderr, `remote: This repository is a mirror of ${sourceUrl}; push there, or stop mirroring with DELETE`);
  t.same(refList(await g.ok(['ls-remote', mirrorUrl])), refsBefore, 'no ref changed');
  await w.pushesRecorded();
  t.equal(Number((await w.running.services.db('push_records').count({ n: '*' }))[0].n), 0, 'no push record');

  // A source that is down: the sync fails, the mirror keeps its refs, last_error says why.
  fs.renameSync(source.bare, `${source.bare}.away`);
  const failing = Date.now();
  t.equal((await w.api('POST', '/api/v1/repos/demo/mirror/mirror/sync', { token })).status, 202);
  const failed = await syncedAfter(w, 'demo/mirror', token, failing, 'failed');
  t.ok(failed.last_error, `last_error: ${failed.last_error}`);
  t.same(refList(await g.ok(['ls-remote', mirrorUrl])), refsBefore, 'the last good state is kept');
  fs.renameSync(`${source.bare}.away`, source.bare);
  // A source host that is down (nothing listens on its port): the same.
  const db = w.running.services.db;
  await db('repository_mirrors').update({ source_url: `git://127.0.0.1:${await freePort()}/source.git` });
  const down = Date.now();
  t.equal((await w.api('POST', '/api/v1/repos/demo/mirror/mirror/sync', { token })).status, 202);
  const downFailed = await syncedAfter(w, 'demo/mirror', token, down, 'failed');
  t.match(downFailed.last_error, /refused|connect|unable/i, `last_error: ${downFailed.last_error}`);
  t.same(refList(await g.ok(['ls-remote', mirrorUrl])), refsBefore, 'still the last good state');
  await db('repository_mirrors').update({ source_url: sourceUrl });

  // A scheduled sync by itself: the clock is moved past next_sync_at (the row made due), no request.
  await g.ok(['checkout', '-q', 'trunk'], { cwd: work });
  await g.commit(work, 'scheduled', { 's.txt': 's\n' });
  await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
  const scheduled = Date.now();
  await w.running.services.db('repository_mirrors').update({ next_sync_at: scheduled });
  const bySchedule = await syncedAfter(w, 'demo/mirror', token, scheduled);
  t.equal(Date.parse(bySchedule.next_sync_at) - Date.parse(bySchedule.last_sync_at), 600_000, 'the next one an interval later');
  t.equal(bySchedule.last_error, null, 'a success clears the error');
  t.same(refList(await g.ok(['ls-remote', mirrorUrl])), refList(await g.ok(['ls-remote', source.bare])));

  // The cutover: an ordinary repository; pushes work, no sync happens, a sync request is a 409.
  const cut = await w.api('DELETE', '/api/v1/repos/demo/mirror/mirror', { token });
  t.equal(cut.status, 200, cut.text);
  t.equal(cut.body.mirror, null);
  t.equal(await mirrorState(w, 'demo/mirror', token), null);
  const again = await w.api('POST', '/api/v1/repos/demo/mirror/mirror/sync', { token });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'conflict');
  t.equal((await w.api('DELETE', '/api/v1/repos/demo/mirror/mirror', { token })).status, 409);
  t.equal(await g.ok(['for-each-ref', 'refs/wharf-mirror/'], { cwd: repoDir(w.config.reposDir, 'demo', 'mirror') }), '', 'the staged refs are gone');
  await g.ok(['fetch', '-q', 'origin'], { cwd: clone });
  await g.ok(['push', '-q', 'origin', 'HEAD:refs/heads/after-cutover'], { cwd: clone });
  await g.commit(work, 'upstream after the cutover', { 'late.txt': 'l\n' });
  await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });
  await quietPeriod(2500); // two polls of the runner
  const after = refList(await g.ok(['ls-remote', mirrorUrl]));
  t.ok(
    after.some((l) => l.endsWith(' refs/heads/after-cutover')),
    'the push landed',
  );
  t.notOk(
    after.includes(refList(await g.ok(['ls-remote', source.bare])).find((l) => l.endsWith(' refs/heads/trunk'))!),
    'upstream work after the cutover is not synced',
  );
});

t.test('a mirror of another Wharf over HTTP with credentials: new LFS objects fetched and served; credentials sealed and shown nowhere', async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const upOrg = await createOrg(upstream.running.services.db, 'up');
  await createRepository(upstream.running.services, { org: upOrg, name: 'proj', default_branch: 'trunk' });
  const { token: upToken } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  await g.ok(['push', '-q', '--mirror', repoUrl(upstream, 'up/proj', upToken)], { cwd: source.bare });
  await uploadLfs(upstream, 'up/proj', upToken, [source.lfs.kept, source.lfs.old]);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const plainUrl = `${upstream.url}/up/proj.git`;
  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: plainUrl, target_org: 'demo', name: 'lfs', mirror: true, auth_username: 'sam', auth_password: upToken },
  });
  t.equal(created.status, 202, created.text);
  t.equal((await waitForJob(w, created.body.id, { token })).status, 'succeeded');
  t.match(await mirrorState(w, 'demo/lfs', token), { source_url: plainUrl, interval: '8h' });

  // Upstream gains a commit with a new LFS object.
  const work = path.join(g.dir, 'up-work');
  await g.ok(['clone', '-q', repoUrl(upstream, 'up/proj', upToken), work], { env: { GIT_LFS_SKIP_SMUDGE: '1' } });
  const fresh = lfsFile(4000);
  await g.commit(work, 'new LFS object', { 'fresh.bin': fresh.pointer });
  await uploadLfs(upstream, 'up/proj', upToken, [fresh]);
  await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });

  const before = Date.now();
  t.equal((await w.api('POST', '/api/v1/repos/demo/lfs/mirror/sync', { token })).status, 202);
  await syncedAfter(w, 'demo/lfs', token, before);
  t.same(refList(await g.ok(['ls-remote', repoUrl(w, 'demo/lfs', token)])), refList(await g.ok(['ls-remote', repoUrl(upstream, 'up/proj', upToken)])));

  // The mirror's LFS API serves the new object.
  const type = 'application/vnd.git-lfs+json';
  const batch = await fetch(`${w.url}/demo/lfs.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}`, accept: type, 'content-type': type },
    body: JSON.stringify({ operation: 'download', objects: [{ oid: fresh.oid, size: fresh.size }] }),
  });
  const answer: any = await batch.json();
  const download = answer.objects[0].actions?.download;
  t.ok(download, JSON.stringify(answer));
  const bytes = Buffer.from(await (await fetch(download.href, { headers: download.header })).arrayBuffer());
  t.same(bytes, fresh.content, 'the new object is served with its bytes');

  // Credentials: sealed in the mirror row, in no answer or log line.
  const rows = await w.running.services.db('repository_mirrors').select('*');
  t.equal(rows.length, 1);
  t.ok(rows[0].credentials, 'kept for the syncs');
  t.notOk(JSON.stringify(rows).includes(upToken), 'sealed at rest');
  t.notOk(w.logs.join('').includes(upToken), 'not in any log line');
  t.notOk((await w.api('GET', '/api/v1/repos/demo/lfs', { token })).text.includes(upToken));
});
