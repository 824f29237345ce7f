import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { createRepository } from '../../src/domain/repos.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { lfsFile, startGitDaemon, uploadLfs, waitForJob } from './helpers.ts';

const basic = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;

t.test("knowing an oid does not link another organization's private LFS object: the import asks the source for every object", async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  // acme keeps a private object on w.
  const secret = lfsFile(4096);
  const acme = await buildUser(w, 'alice', { org: 'acme', role: 'owner' });
  await buildRepo(w, 'acme', 'private');
  await uploadLfs(w, 'acme/private', acme.token, [secret]);

  // evil's source holds a commit whose only file is a pointer to that oid; the source never had the bytes.
  const work = path.join(g.dir, 'loot-work');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'pointer only', { '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n', 'loot.bin': secret.pointer });
  const upOrg = await createOrg(upstream.running.services.db, 'evil-up');
  await createRepository(upstream.running.services, { org: upOrg, name: 'loot', default_branch: 'main' });
  const { token: upToken } = await buildUser(upstream, 'mallory', { org: 'evil-up', role: 'owner' });
  await g.ok(['push', '-q', repoUrl(upstream, 'evil-up/loot', upToken), 'main'], { cwd: work });

  const evil = await buildUser(w, 'eve', { org: 'evil', role: 'owner' });
  const before = upstream.logs.length;
  const created = await w.api('POST', '/api/v1/repos/import', {
    token: evil.token,
    body: { source_url: `${upstream.url}/evil-up/loot.git`, target_org: 'evil', name: 'loot', auth_password: upToken },
  });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id, { token: evil.token });
  t.equal(job.status, 'succeeded', job.error);
  const batches = upstream.logs
    .slice(before)
    .map((l) => JSON.parse(l))
    .filter((l) => l.route === '/:org/:repo/info/lfs/objects/batch');
  t.equal(batches.length, 1, 'the source was asked for the object');
  t.equal(job.repository.lfs_objects, 0, 'nothing linked');
  t.same(
    job.repository.missing_lfs_objects.map((m: any) => m.oid),
    [secret.oid],
    'the object is listed missing at the source',
  );
  const res = await fetch(`${w.url}/evil/loot.git/info/lfs/objects/${secret.oid}`, { headers: { authorization: basic(evil.token) } });
  t.equal(res.status, 404, "acme's bytes are not served from evil/loot");
  await res.arrayBuffer();
  const kept = await fetch(`${w.url}/acme/private.git/info/lfs/objects/${secret.oid}`, { headers: { authorization: basic(acme.token) } });
  t.same(Buffer.from(await kept.arrayBuffer()), secret.content, 'acme still has its object');
});

t.test('a .gitmodules that Wharf refuses on push fails the import with a clear error, leaving nothing', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const work = path.join(g.dir, 'bad-work');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'first', { 'README.md': 'hi\n' });
  await g.commit(work, 'submodule with an option for a URL', { '.gitmodules': '[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch${IFS}/tmp/pwned\n' });
  await g.ok(['clone', '-q', '--bare', work, path.join(base, 'bad.git')]);
  const daemon = await startGitDaemon(t, base);

  // Wharf's own push check refuses this commit.
  await buildRepo(w, 'demo', 'pushed');
  const pushed = await g.run(['push', repoUrl(w, 'demo/pushed', token), 'main'], { cwd: work });
  t.not(pushed.code, 0, 'a push of the same commit is refused');
  t.match(pushed.stderr, /gitmodulesUrl|fsck/);

  const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: daemon.url('bad'), target_org: 'demo', name: 'bad' } });
  const job = await waitForJob(w, created.body.id, { token });
  t.equal(job.status, 'failed', 'the import fails');
  t.match(job.error, /integrity check|fsck/i);
  t.match(job.error, /gitmodulesUrl/, 'the error names the check');
  t.notOk(fs.existsSync(repoDir(w.config.reposDir, 'demo', 'bad')), 'no directory left');
  t.equal((await w.api('GET', '/api/v1/repos/demo/bad', { token })).status, 404);
});

t.test('an ext:: submodule URL anywhere in the history fails the import with a clear error, leaving nothing, as a push of it fails', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const work = path.join(g.dir, 'ext-work');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'first', { 'README.md': 'hi\n' });
  await g.commit(work, 'submodule through ext::', { '.gitmodules': '[submodule "x"]\n\tpath = x\n\turl = ext::sh -c touch% /tmp/pwned\n' });
  // The tip is harmless: the bad blob is only in history, where a checkout of an old commit finds it.
  await g.commit(work, 'submodule fixed', { '.gitmodules': '[submodule "x"]\n\tpath = x\n\turl = https://example.com/x.git\n' });
  await g.ok(['clone', '-q', '--bare', work, path.join(base, 'ext.git')]);
  const daemon = await startGitDaemon(t, base);

  await buildRepo(w, 'demo', 'pushed');
  const pushed = await g.run(['push', repoUrl(w, 'demo/pushed', token), 'main'], { cwd: work });
  t.not(pushed.code, 0, 'a push of the same history is refused');
  t.match(pushed.stderr, /gitmodulesUrl/);

  const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: daemon.url('ext'), target_org: 'demo', name: 'ext' } });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id, { token });
  t.equal(job.status, 'failed', 'the import fails');
  t.match(
    job.error,
    /integrity checks \(fsck, as for a push\): gitmodulesUrl: \.gitmodules blob [0-9a-f]{40}: submodule "x" url "ext::sh -c touch% \/tmp\/pwned": it uses the "ext::" remote-helper transport/,
  );
  t.notOk(fs.existsSync(repoDir(w.config.reposDir, 'demo', 'ext')), 'no directory left');
  t.equal((await w.api('GET', '/api/v1/repos/demo/ext', { token })).status, 404, 'no repository');
});
