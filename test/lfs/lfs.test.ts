import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl, type GitClient } from '../helpers/git.ts';

const LFS = 'application/vnd.git-lfs+json';
const basic = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A git client with git-lfs's filters in its own HOME's config (never the real global one). */
async function lfsClient(t: Test): Promise<GitClient> {
  const g = gitClient(t);
  await g.ok(['lfs', 'install', '--skip-repo']);
  t.match(fs.readFileSync(path.join(g.home, '.gitconfig'), 'utf8'), /filter "lfs"/);
  return g;
}

function batch(w: TestWharf, repo: string, body: unknown, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': LFS, accept: LFS };
  if (authorization) headers.authorization = authorization;
  return fetch(`${w.url}/${repo}.git/info/lfs/objects/batch`, { method: 'POST', headers, body: JSON.stringify(body) });
}

t.test('git lfs pushes, clones and pulls a 5 MB binary without errors or warnings', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = await lfsClient(t);
  const url = repoUrl(w, 'acme/assets', ann.token);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.ok(['lfs', 'track', '*.bin'], { cwd: src });
  const content = randomBytes(5 * 1024 * 1024);
  const oid = sha256(content);
  await g.commit(src, 'add a binary', { 'model.bin': content });
  t.match(await g.ok(['show', 'HEAD:model.bin'], { cwd: src }), new RegExp(`oid sha256:${oid}`), 'the commit holds a pointer');
  await g.ok(['remote', 'add', 'origin', url], { cwd: src });

  const push = await g.run(['push', 'origin', 'main'], { cwd: src });
  t.equal(push.code, 0, 'push with LFS objects');
  t.notMatch(push.stderr, /warning|error/i, 'no warning or error from git lfs');
  t.equal(await w.running.services.lfs.size(oid), content.length, 'the object is in the store');
  const links = await w.running.services.db('repository_lfs_objects').select('oid');
  t.same(
    links.map((l: any) => l.oid),
    [oid],
    'and linked to the repository',
  );

  const cloned = path.join(g.dir, 'clone');
  const clone = await g.run(['clone', url, cloned]);
  t.equal(clone.code, 0, 'clone');
  t.notMatch(clone.stderr, /warning|error/i);
  t.ok(fs.readFileSync(path.join(cloned, 'model.bin')).equals(content), 'the clone has the real content');

  const skipped = path.join(g.dir, 'skipped');
  await g.ok(['clone', '-q', url, skipped], { env: { GIT_LFS_SKIP_SMUDGE: '1' } });
  t.notOk(fs.readFileSync(path.join(skipped, 'model.bin')).equals(content), 'without smudge only the pointer');
  const pull = await g.run(['lfs', 'pull'], { cwd: skipped });
  t.equal(pull.code, 0, 'git lfs pull');
  t.ok(fs.readFileSync(path.join(skipped, 'model.bin')).equals(content), 'git lfs pull brings the content');

  // The newcomer's path: push --mirror an existing repository, LFS included, to a new one.
  const mirrorUrl = repoUrl(w, 'acme/mirrored', ann.token);
  await g.ok(['tag', '-a', '-m', 'v1', 'v1'], { cwd: src });
  const mirror = await g.run(['push', '--mirror', mirrorUrl], { cwd: src });
  t.equal(mirror.code, 0, 'push --mirror with LFS objects creates the repository');
  t.same(refList(await g.ok(['ls-remote', mirrorUrl])), refList(await g.ok(['show-ref', '-d'], { cwd: src })), 'every ref landed');
  const back = path.join(g.dir, 'back');
  await g.ok(['clone', '-q', mirrorUrl, back]);
  t.ok(fs.readFileSync(path.join(back, 'model.bin')).equals(content), 'and clones back with the content');
  const linked = await w.running.services
    .db('repository_lfs_objects as l')
    .join('repositories as r', 'r.id', 'l.repository_id')
    .where('r.name', 'mirrored')
    .select('l.oid');
  t.same(
    linked.map((l: any) => l.oid),
    [oid],
    'the object is linked to the new repository too',
  );
});

t.test('uploads are checked while streaming: a corrupt or short upload stores nothing', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await buildRepo(w, 'acme', 'assets');
  const content = randomBytes(100_000);
  const oid = sha256(content);
  const auth = basic(ann.token);
  const answer = await batch(w, 'acme/assets', { operation: 'upload', transfers: ['basic'], objects: [{ oid, size: content.length }] }, auth);
  t.equal(answer.status, 200);
  t.match(answer.headers.get('content-type'), LFS);
  const { objects, transfer } = await answer.json();
  t.equal(transfer, 'basic');
  const upload = objects[0].actions.upload;
  t.equal(upload.header.Authorization, auth, 'the href carries the caller’s credentials');

  const put = (body: Buffer) =>
    fetch(upload.href, { method: 'PUT', headers: { ...upload.header, 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) });
  const corrupt = Buffer.from(content);
  corrupt[500] ^= 1;
  const bad = await put(corrupt);
  t.equal(bad.status, 422, 'same size, wrong content');
  t.equal((await bad.json()).error.code, 'validation_failed');
  t.equal((await put(content.subarray(1))).status, 422, 'short content');
  t.equal(await w.running.services.lfs.size(oid), null, 'nothing stored');
  t.equal((await w.running.services.db('lfs_objects').count('* as n').first())!.n, 0, 'nothing recorded');
  t.same(fs.readdirSync(path.join(w.config.lfsDir, 'tmp')), [], 'no temporary file left');
  const verify = objects[0].actions.verify;
  const notYet = await fetch(verify.href, {
    method: 'POST',
    headers: { ...verify.header, 'content-type': LFS },
    body: JSON.stringify({ oid, size: content.length }),
  });
  t.equal(notYet.status, 404, 'verify before upload');

  t.equal((await put(content)).status, 200, 'the right bytes are accepted');
  const verified = await fetch(verify.href, {
    method: 'POST',
    headers: { ...verify.header, 'content-type': LFS },
    body: JSON.stringify({ oid, size: content.length }),
  });
  t.equal(verified.status, 200, 'verify after upload');
  const again = await (await batch(w, 'acme/assets', { operation: 'upload', objects: [{ oid, size: content.length }] }, auth)).json();
  t.notOk(again.objects[0].actions, 'an object already held needs no upload');
});

t.test('LFS access follows the repository: 401 with LFS-Authenticate, per-object errors, no reads across repositories', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const bob = await buildUser(w, 'bob');
  await buildRepo(w, 'acme', 'secret');
  await buildRepo(w, 'acme', 'open', 'public');
  const content = randomBytes(1000);
  const oid = sha256(content);
  const auth = basic(ann.token);
  const up = await (await batch(w, 'acme/secret', { operation: 'upload', objects: [{ oid, size: 1000 }] }, auth)).json();
  t.equal(
    (await fetch(up.objects[0].actions.upload.href, { method: 'PUT', headers: up.objects[0].actions.upload.header, body: new Uint8Array(content) })).status,
    200,
  );

  const anonymous = await batch(w, 'acme/secret', { operation: 'download', objects: [{ oid, size: 1000 }] });
  t.equal(anonymous.status, 401, 'private: credentials needed');
  t.equal(anonymous.headers.get('lfs-authenticate'), 'Basic realm="Wharf"');
  t.type((await anonymous.json()).message, 'string', 'git-lfs error body');
  t.equal(
    (await batch(w, 'acme/secret', { operation: 'download', objects: [{ oid, size: 1000 }] }, basic(bob.token))).status,
    404,
    'private: hidden from non-members',
  );
  t.equal((await fetch(`${w.url}/acme/secret.git/info/lfs/objects/${oid}`)).status, 401);
  const got = await fetch(`${w.url}/acme/secret.git/info/lfs/objects/${oid}`, { headers: { authorization: auth } });
  t.equal(got.status, 200);
  t.ok(Buffer.from(await got.arrayBuffer()).equals(content), 'download by a member');

  // The public repository does not hold the object: knowing its oid is not enough to read it.
  const open = await batch(w, 'acme/open', {
    operation: 'download',
    objects: [
      { oid, size: 1000 },
      { oid: 'nothex', size: 1 },
    ],
  });
  t.equal(open.status, 200, 'anonymous download batch on a public repository');
  const { objects } = await open.json();
  t.same(
    objects.map((o: any) => o.error?.code),
    [404, 422],
    'per-object errors inside a 200',
  );
  t.equal((await fetch(`${w.url}/acme/open.git/info/lfs/objects/${oid}`)).status, 404);
  const claim = await (await batch(w, 'acme/open', { operation: 'upload', objects: [{ oid, size: 1000 }] }, auth)).json();
  t.ok(claim.objects[0].actions.upload, 'another repository must upload the bytes itself');
  t.equal((await batch(w, 'acme/open', { operation: 'upload', objects: [{ oid, size: 1000 }] })).status, 401, 'anonymous upload');
  t.equal((await batch(w, 'acme/open', { operation: 'upload', objects: [{ oid, size: 1000 }] }, basic(bob.token))).status, 403, 'non-member upload');

  t.equal((await batch(w, 'acme/open', { operation: 'delete', objects: [] }, auth)).status, 422, 'schema');
  const malformed = await fetch(`${w.url}/acme/open.git/info/lfs/objects/batch`, { method: 'POST', headers: { 'content-type': LFS }, body: '{' });
  t.equal(malformed.status, 400);
  t.equal((await fetch(`${w.url}/acme/open.git/info/lfs/locks`, { method: 'POST', headers: { authorization: auth } })).status, 404, 'no lock creation');
});
