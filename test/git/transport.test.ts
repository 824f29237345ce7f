import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl, type GitClient } from '../helpers/git.ts';

/** A repository with several branches, both kinds of tag, a note and a custom ref. */
async function richRepository(g: GitClient, name: string): Promise<string> {
  const src = path.join(g.dir, name);
  await g.ok(['init', '-q', src]);
  const first = await g.commit(src, 'first');
  await g.commit(src, 'second', { 'docs/readme.md': '# hello\n' });
  await g.ok(['branch', 'release-2000'], { cwd: src });
  await g.ok(['checkout', '-q', '-b', 'feature', first], { cwd: src });
  await g.commit(src, 'on feature');
  await g.ok(['checkout', '-q', 'main'], { cwd: src });
  await g.ok(['merge', '-q', '--no-ff', '-m', 'merge feature', 'feature'], { cwd: src });
  await g.ok(['tag', 'v0.1', first], { cwd: src });
  await g.ok(['tag', '-a', '-m', 'release 1.0', 'v1.0'], { cwd: src });
  await g.ok(['notes', 'add', '-m', 'a note', 'HEAD'], { cwd: src });
  await g.ok(['update-ref', 'refs/custom/thing', first], { cwd: src });
  return src;
}

t.test('a mirror push creates the repository with every ref; a clone brings it back whole', async (t) => {
  const w = await startWharf(t);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = gitClient(t);
  const src = await richRepository(g, 'src');
  const url = repoUrl(w, 'acme/mirror', token);

  const push = await g.run(['push', '--mirror', url], { cwd: src });
  t.equal(push.code, 0, 'mirror push accepted');
  const local = refList(await g.ok(['show-ref', '-d'], { cwd: src }));
  t.equal(local.length, 8, 'three branches, two tags (one peeled), a note, a custom ref');
  t.same(refList(await g.ok(['ls-remote', url])), local, 'ls-remote equals the source');
  t.match(await g.ok(['ls-remote', '--symref', url, 'HEAD']), /^ref: refs\/heads\/main\tHEAD/);

  const repo = await w.api('GET', '/api/v1/repos/acme/mirror');
  t.equal(repo.status, 200);
  t.equal(repo.body.visibility, 'private', 'push to create makes a private repository');

  const back = path.join(g.dir, 'back.git');
  const clone = await g.run(['clone', '--mirror', url, back]);
  t.equal(clone.code, 0, 'mirror clone');
  t.same(refList(await g.ok(['show-ref', '-d'], { cwd: back })), local, 'the clone has every ref');
  const fsck = await g.run(['fsck', '--strict', '--no-dangling'], { cwd: back });
  t.equal(fsck.code, 0, 'fsck exits 0');
  t.equal(fsck.stdout + fsck.stderr.replace(/Checking.*\n?/g, ''), '', 'fsck is clean');

  await w.pushesRecorded();
  const events = await w.running.services.db('events').where({ type: 'push' }).orderBy('id').select('ref');
  t.same(
    events.map((e: any) => e.ref).sort(),
    local
      .filter((l) => !l.endsWith('^{}'))
      .map((l) => l.split(' ')[1])
      .filter((r) => /^refs\/(heads|tags)\//.test(r))
      .sort(),
    'one push event per branch and tag; refs/custom and refs/notes raise none',
  );
});

t.test('a first push of a master-only repository points HEAD and the default branch at master', async (t) => {
  const w = await startWharf(t);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['-c', 'init.defaultBranch=master', 'init', '-q', src]);
  await g.commit(src, 'one');
  const url = repoUrl(w, 'acme/old', token);
  t.equal((await g.run(['push', url, 'master'], { cwd: src })).code, 0);
  t.match(await g.ok(['ls-remote', '--symref', url, 'HEAD']), /^ref: refs\/heads\/master\tHEAD/);
  t.equal((await w.api('GET', '/api/v1/repos/acme/old')).body.default_branch, 'master');
  await w.pushesRecorded();
  // The repository did not exist before the push, so no webhook could receive its event: it is kept without a payload.
  const event = await w.running.services.db('events').first('ref', 'payload');
  t.same([event.ref, event.payload], ['refs/heads/master', null], 'the push is recorded, without a payload nobody will read');
});

t.test('visibility: public clones anonymously; private and internal ask for credentials', async (t) => {
  const w = await startWharf(t);
  const member = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const outsider = await buildUser(w, 'bob');
  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'one');
  for (const visibility of ['public', 'internal', 'private'] as const) {
    await buildRepo(w, 'acme', visibility, visibility);
    t.equal((await g.run(['push', repoUrl(w, `acme/${visibility}`, member.token), 'main'], { cwd: src })).code, 0);
  }

  const anonymous = await g.run(['clone', repoUrl(w, 'acme/public'), path.join(g.dir, 'pub')]);
  t.equal(anonymous.code, 0, 'a public repository clones anonymously');
  for (const hidden of ['internal', 'private']) {
    const r = await g.run(['clone', repoUrl(w, `acme/${hidden}`), path.join(g.dir, `anon-${hidden}`)]);
    t.not(r.code, 0, `${hidden} is not clonable anonymously`);
    const raw = await fetch(`${w.url}/acme/${hidden}.git/info/refs?service=git-upload-pack`);
    t.equal(raw.status, 401);
    t.equal(raw.headers.get('www-authenticate'), 'Basic realm="Wharf"');
  }
  const internal = await g.run(['clone', repoUrl(w, 'acme/internal', outsider.token), path.join(g.dir, 'int')]);
  t.equal(internal.code, 0, 'any authenticated user reads an internal repository');
  const basic = (token: string) => ({ authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` });
  const hidden = await fetch(`${w.url}/acme/private.git/info/refs?service=git-upload-pack`, { headers: basic(outsider.token) });
  t.equal(hidden.status, 404, 'a private repository is not revealed to a non-member');
  const push = await fetch(`${w.url}/acme/public.git/info/refs?service=git-receive-pack`, { headers: basic(outsider.token) });
  t.equal(push.status, 403, 'a non-member may read but not push');
  const bad = await fetch(`${w.url}/acme/public.git/info/refs?service=git-upload-pack`, { headers: basic('wharf_wrong') });
  t.equal(bad.status, 401, 'bad credentials are refused even on a public repository');
  const asUser = await fetch(`${w.url}/acme/private.git/info/refs?service=git-upload-pack`, {
    headers: { authorization: `Basic ${Buffer.from(`${member.token}:`).toString('base64')}` },
  });
  t.equal(asUser.status, 200, 'the token as user name with an empty password');
  t.match(asUser.headers.get('content-type'), 'application/x-git-upload-pack-advertisement');
  const missing = await fetch(`${w.url}/acme/nothing.git/info/refs?service=git-upload-pack`, { headers: basic(member.token) });
  t.equal(missing.status, 404);
  const notMember = await fetch(`${w.url}/acme/created.git/info/refs?service=git-receive-pack`, { headers: basic(outsider.token) });
  t.equal(notMember.status, 404, 'only members push to create');
  t.equal((await w.api('GET', '/api/v1/repos/acme/created')).status, 404);
});

t.test('protocol v2 is served when the client asks for it', async (t) => {
  const w = await startWharf(t);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'one');
  const url = repoUrl(w, 'acme/v2', token);
  await g.ok(['push', url, 'main'], { cwd: src });
  const env = { GIT_TRACE_PACKET: '1' };
  const v2 = await g.run(['-c', 'protocol.version=2', 'ls-remote', url], { env });
  t.equal(v2.code, 0);
  t.match(v2.stderr, /git< version 2/, 'the server answered with protocol v2');
  const v0 = await g.run(['-c', 'protocol.version=0', 'ls-remote', url], { env });
  t.notMatch(v0.stderr, /git< version 2/, 'and v0 when asked for v0');
  const clone = await g.run(['-c', 'protocol.version=2', 'clone', url, path.join(g.dir, 'c')], { env });
  t.equal(clone.code, 0, 'a v2 fetch works');
  t.match(clone.stderr, /> command=fetch/, 'the fetch used the v2 fetch command');
  const partial = await g.run(['-c', 'protocol.version=2', 'clone', '--filter=blob:none', url, path.join(g.dir, 'partial')]);
  t.equal(partial.code, 0, 'a partial clone works');
  t.notMatch(partial.stderr, /filtering not recognized/, 'the server honours the filter');
});

t.test('paths under a repository that are not smart HTTP are 404', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'pub', 'public');
  for (const p of [
    '/acme/pub.git/HEAD',
    '/acme/pub.git/objects/info/packs',
    '/acme/pub.git/info/refs',
    '/acme/pub.git/info/refs?service=git-nope',
    '/acme/pub.git/git-upload-pack',
    '/acme/pub/info/lfs/nope',
  ]) {
    const r = await fetch(w.url + p);
    t.equal(r.status, 404, p);
  }
});

t.test('gzip request bodies: a fetch with many haves is compressed by git and inflated by the backend', async (t) => {
  const w = await startWharf(t);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = gitClient(t);
  const url = repoUrl(w, 'acme/gz', token);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'base');
  await g.ok(['push', '-q', url, 'main'], { cwd: src });
  const local = path.join(g.dir, 'local');
  await g.ok(['clone', '-q', url, local]);
  // Local-only history makes the client send a long list of "have" lines, which it gzips.
  let stream = '';
  for (let i = 0; i < 400; i++) stream += `commit refs/heads/local-${i}\ncommitter A <a@example.com> ${1700000000 + i} +0000\ndata 2\nx\n\n`;
  await g.ok(['fast-import', '--quiet'], { cwd: local, input: stream });
  const upstream = await g.commit(src, 'upstream');
  await g.ok(['push', '-q', url, 'main'], { cwd: src });
  const fetched = await g.run(['fetch', 'origin'], { cwd: local, env: { GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' } });
  t.equal(fetched.code, 0, 'the fetch succeeds');
  t.match(fetched.stderr, /Content-Encoding: gzip/, 'the request body was gzipped');
  t.equal((await g.ok(['rev-parse', 'origin/main'], { cwd: local })).trim(), upstream);
});

t.test("a repository's own hooks never run, whatever its config says; Wharf's post-receive does", async (t) => {
  const w = await startWharf(t);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'hooked');
  const bare = path.join(w.config.reposDir, 'acme', 'hooked.git');
  const marker = path.join(w.dir, 'hook-ran');
  const evil = `#!/bin/sh\necho ran >> ${marker}\nexit 1\n`;
  fs.mkdirSync(path.join(bare, 'hooks'), { recursive: true });
  for (const hook of ['pre-receive', 'update', 'post-receive', 'post-update', 'reference-transaction'])
    fs.writeFileSync(path.join(bare, 'hooks', hook), evil, { mode: 0o755 });
  const own = path.join(w.dir, 'own-hooks');
  fs.mkdirSync(own);
  for (const hook of ['pre-receive', 'post-receive']) fs.writeFileSync(path.join(own, hook), evil, { mode: 0o755 });
  const g = gitClient(t);
  await g.ok(['config', 'core.hooksPath', own], { cwd: bare });
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'one');
  const push = await g.run(['push', repoUrl(w, 'acme/hooked', token), 'main'], { cwd: src });
  t.equal(push.code, 0, 'the push is accepted although the planted hooks would refuse it');
  t.notOk(fs.existsSync(marker), 'no planted hook ran');
  await w.pushesRecorded();
  const events = await w.running.services.db('events').where({ repository_id: repo.id }).select('ref');
  t.same(
    events.map((e: any) => e.ref),
    ['refs/heads/main'],
    "Wharf's post-receive reported the update",
  );
});
