import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { refList, repoUrl } from '../helpers/git.ts';
import { lfsClient, mirrorRow, mirrorSettled } from './helpers.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('a push lands on a second Wharf: branches, tags, LFS objects, deletions; credentials nowhere', async (t) => {
  const remote = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(remote, 'dst', 'mirror');
  await buildRepo(remote, 'dst', 'second');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });

  // One mirror with the credentials as fields, one with them in the URL's user info.
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, username: 'bob', password: bob.token },
  });
  t.equal(created.status, 201, created.text);
  t.equal(created.headers.get('location'), `/api/v1/repos/acme/proj/push-mirrors/${created.body.id}`);
  t.match(created.body, { url: `${remote.url}/dst/mirror.git`, sync_on_push: true, interval: '8h', has_credentials: true });
  const inUrl = new URL(`${remote.url}/dst/second.git`);
  inUrl.username = 'bob';
  inUrl.password = bob.token;
  const second = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token, body: { url: inUrl.href, interval: '12h' } });
  t.equal(second.status, 201, second.text);
  t.equal(second.body.url, `${remote.url}/dst/second.git`, 'user info taken out of the stored URL');
  t.equal(second.body.interval, '12h');

  // A push with an LFS object, a second branch and a tag.
  const g = await lfsClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.ok(['lfs', 'track', '*.bin'], { cwd: src });
  const content = randomBytes(200 * 1024);
  await g.commit(src, 'add a binary', { 'model.bin': content });
  await g.ok(['branch', 'feature'], { cwd: src });
  await g.ok(['tag', '-a', '-m', 'v1', 'v1'], { cwd: src });
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/proj', ann.token)], { cwd: src });
  const before = Date.now();
  await g.ok(['push', '-q', 'origin', 'main', 'feature', 'v1'], { cwd: src });
  await w.pushesRecorded();
  for (const id of [created.body.id, second.body.id]) {
    const row = await mirrorSettled(w, id, before);
    t.equal(row.last_sync_status, 'succeeded', row.last_error ?? '');
  }
  const ours = refList(await g.ok(['ls-remote', repoUrl(w, 'acme/proj', ann.token)]));
  t.same(refList(await g.ok(['ls-remote', repoUrl(remote, 'dst/mirror', bob.token)])), ours, 'every branch and tag landed');
  t.same(refList(await g.ok(['ls-remote', repoUrl(remote, 'dst/second', bob.token)])), ours, 'on the mirror with credentials in its URL too');

  // The LFS object is served by the second Wharf's LFS API: a real git lfs clone gets the bytes.
  const clone = path.join(g.dir, 'clone');
  await g.ok(['clone', '-q', repoUrl(remote, 'dst/mirror', bob.token), clone]);
  t.ok(fs.readFileSync(path.join(clone, 'model.bin')).equals(content), 'the LFS object arrived with its pointer');
  const linked = await remote.running.services.db('repository_lfs_objects').where('oid', sha256(content));
  t.equal(linked.length, 2, 'linked to both remote repositories');

  // A deleted branch is deleted there; a new tag arrives.
  await g.commit(src, 'more', { 'b.txt': 'b\n' });
  await g.ok(['tag', 'v2'], { cwd: src });
  const again = Date.now();
  await g.ok(['push', '-q', 'origin', ':feature', 'main', 'v2'], { cwd: src });
  await w.pushesRecorded();
  await mirrorSettled(w, created.body.id, again);
  const remoteRefs = refList(await g.ok(['ls-remote', repoUrl(remote, 'dst/mirror', bob.token)]));
  t.same(remoteRefs, refList(await g.ok(['ls-remote', repoUrl(w, 'acme/proj', ann.token)])), 'refs equal after the second push');
  t.notOk(
    remoteRefs.some((r) => r.endsWith(' refs/heads/feature')),
    'the deleted branch is gone',
  );
  t.ok(
    remoteRefs.some((r) => r.endsWith(' refs/tags/v2')),
    'the new tag arrived',
  );

  // The credentials appear in no answer, log line or stored column but the sealed one.
  const list = await w.api('GET', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token });
  t.equal(list.status, 200);
  t.equal(list.body.length, 2);
  for (const answer of [created, second, list]) t.notOk(answer.text.includes(bob.token), 'not in an API answer');
  t.notOk(w.logs.join('').includes(bob.token), 'not in a log line');
  t.ok(
    w.logs.some((l) => l.includes('push mirror synced')),
    'syncs are logged',
  );
  const row = await mirrorRow(w, created.body.id);
  t.match(row.credentials, /^v1:[0-9a-f]{8}:/, 'sealed at rest');
  t.notOk(JSON.stringify(row).includes(bob.token));
  t.notOk(row.url.includes(bob.token));
  t.notOk(fs.readdirSync(w.config.dataDir, { recursive: true }).some((f) => String(f).includes(bob.token)));
});

t.test('a remote that refuses: failed, with a scrubbed error; retried at the next trigger', async (t) => {
  const remote = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(remote, 'dst', 'mirror');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const wrong = 'wharf_wrong-secret-0123456789';
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, username: 'bob', password: wrong },
  });
  t.equal(created.status, 201, created.text);
  const g = await lfsClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.ok(['lfs', 'track', '*.bin'], { cwd: src });
  await g.commit(src, 'first', { 'a.bin': randomBytes(1000) });
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/proj', ann.token)], { cwd: src });
  const before = Date.now();
  await g.ok(['push', '-q', 'origin', 'main'], { cwd: src });
  await w.pushesRecorded();
  const row = await mirrorSettled(w, created.body.id, before);
  t.equal(row.last_sync_status, 'failed');
  const listed = (await w.api('GET', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token })).body[0];
  t.equal(listed.last_sync_status, 'failed');
  t.match(listed.last_error, /401|authentication|credentials/, listed.last_error);
  t.comment(`last_error: ${listed.last_error}`);
  for (const text of [listed.last_error, JSON.stringify(listed), w.logs.join('')]) t.notOk(text.includes(wrong), 'the password is nowhere');
  t.equal((await g.ok(['ls-remote', repoUrl(remote, 'dst/mirror', bob.token)])).trim(), '', 'nothing landed');

  // The LFS step passes with an empty repository; git's own refusal is scrubbed too.
  await buildRepo(w, 'acme', 'empty');
  const gitOnly = await w.api('POST', '/api/v1/repos/acme/empty/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, password: wrong },
  });
  const failed = await mirrorSettled(w, gitOnly.body.id, 0);
  t.equal(failed.last_sync_status, 'failed');
  t.notOk(String(failed.last_error).includes(wrong));

  // Retried at the next trigger: a push (here after fixing nothing but asking for a sync) runs it again.
  const asked = Date.now();
  const sync = await w.api('POST', `/api/v1/repos/acme/proj/push-mirrors/${created.body.id}/sync`, { token: ann.token });
  t.equal(sync.status, 202, sync.text);
  const retried = await mirrorSettled(w, created.body.id, asked);
  t.equal(retried.last_sync_status, 'failed', 'tried again, and failed again');
});

t.test('an interval-triggered sync: no push triggers a mirror with sync_on_push false', async (t) => {
  const remote = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, config: { pushMirrorMinIntervalMs: 500 } });
  await buildRepo(remote, 'dst', 'mirror');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, username: 'bob', password: bob.token, sync_on_push: false, interval: '2s' },
  });
  t.equal(created.status, 201, created.text);
  t.equal(created.body.sync_on_push, false);
  t.equal(created.body.interval, '2s');
  const first = await mirrorSettled(w, created.body.id, 0);
  t.equal(first.last_sync_status, 'succeeded', first.last_error ?? '');
  const g = await lfsClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'first');
  await g.ok(['push', '-q', repoUrl(w, 'acme/proj', ann.token), 'main'], { cwd: src });
  const pushed = Date.now();
  await w.pushesRecorded();
  t.equal(Number((await mirrorRow(w, created.body.id)).generation), 0, 'the push did not mark it due');
  const synced = await mirrorSettled(w, created.body.id, pushed);
  t.equal(synced.last_sync_status, 'succeeded');
  t.ok(Number(synced.last_sync_at) >= Number(first.next_sync_at), 'the sync came when the interval fell due');
  t.same(
    refList(await g.ok(['ls-remote', repoUrl(remote, 'dst/mirror', bob.token)])),
    refList(await g.ok(['ls-remote', repoUrl(w, 'acme/proj', ann.token)])),
    'the push reached the remote by the interval',
  );
  const answer = (await w.api('GET', `/api/v1/repos/acme/proj/push-mirrors/${created.body.id}`, { token: ann.token })).body;
  t.ok(Date.parse(answer.next_sync_at) - Date.parse(answer.last_sync_at) >= 2000, 'the next sync is an interval after the last');
});

t.test('a change made through the API that moves a branch or tag (a release creating its tag) syncs the mirror too', async (t) => {
  const remote = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(remote, 'dst', 'mirror');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const g = await lfsClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'first', { 'a.txt': 'a\n' });
  await g.ok(['push', '-q', repoUrl(w, 'acme/proj', ann.token), 'main'], { cwd: src });
  await w.pushesRecorded();
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, username: 'bob', password: bob.token },
  });
  t.equal(created.status, 201, created.text);
  await mirrorSettled(w, created.body.id, 0);

  const before = Date.now();
  const release = await w.api('POST', '/api/v1/repos/acme/proj/releases', { token: ann.token, body: { tag_name: 'v1.0', name: 'One' } });
  t.equal(release.status, 201, release.text);
  const row = await mirrorSettled(w, created.body.id, before);
  t.equal(row.last_sync_status, 'succeeded', row.last_error ?? '');
  const remoteRefs = refList(await g.ok(['ls-remote', repoUrl(remote, 'dst/mirror', bob.token)]));
  t.ok(
    remoteRefs.some((r) => r.endsWith(' refs/tags/v1.0')),
    'the tag the release created reached the mirror without a git push',
  );
  t.same(remoteRefs, refList(await g.ok(['ls-remote', repoUrl(w, 'acme/proj', ann.token)])));
});
