import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { HeadBucketCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startSwift, type TestSwift } from '../helpers/swift.ts';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl, type GitClient } from '../helpers/git.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { objectKey } from '../../src/lfs/s3Store.ts';

const LFS = 'application/vnd.git-lfs+json';
const basic = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const swift = await startSwift(t);
if (swift) tests(swift);

async function lfsClient(t: Test): Promise<GitClient> {
  const g = gitClient(t);
  await g.ok(['lfs', 'install', '--skip-repo']);
  return g;
}

function batch(w: { url: string }, repo: string, body: unknown, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': LFS, accept: LFS };
  if (authorization) headers.authorization = authorization;
  return fetch(`${w.url}/${repo}.git/info/lfs/objects/batch`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** The requests the node answered on its own object route (GET downloads, PUT uploads), from its request log. */
function objectRequests(w: TestWharf, method: string): string[] {
  return w.logs
    .map((line) => JSON.parse(line))
    .filter((l) => l.msg === 'request' && l.method === method && l.route === '/:org/:repo/info/lfs/objects/:oid')
    .map((l) => l.path);
}

async function s3Wharf(t: Test, s: TestSwift, env: Record<string, string> = {}) {
  const bucket = await s.bucket();
  return { bucket, w: await startWharf(t, { env: { ...s.env(bucket), ...env } }) };
}

function tests(s: TestSwift) {
  t.test('git lfs push goes through the node into the bucket; a clone downloads straight from the bucket, byte-identical', async (t) => {
    const { w, bucket } = await s3Wharf(t, s);
    const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
    const g = await lfsClient(t);
    const url = repoUrl(w, 'acme/assets', ann.token);
    const src = path.join(g.dir, 'src');
    await g.ok(['init', '-q', src]);
    await g.ok(['lfs', 'track', '*.bin'], { cwd: src });
    const big = randomBytes(9 * 1024 * 1024 + 17); // above the 8 MiB part size: a multipart upload
    const small = randomBytes(3000);
    await g.commit(src, 'add binaries', { 'model.bin': big, 'icon.bin': small });
    await g.ok(['remote', 'add', 'origin', url], { cwd: src });
    const push = await g.run(['push', 'origin', 'main'], { cwd: src });
    t.equal(push.code, 0, 'push with LFS objects');
    t.notMatch(push.stderr, /warning|error/i, 'no warning or error from git lfs');
    t.equal(objectRequests(w, 'PUT').length, 2, 'both uploads went through the node');
    for (const content of [big, small]) {
      const head = await s.client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(sha256(content)) }));
      t.equal(head.ContentLength, content.length, 'the object is in the bucket under its key');
    }
    t.equal((await s.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads?.length ?? 0, 0, 'no multipart upload left open');

    const answer = await (await batch(w, 'acme/assets', { operation: 'download', objects: [{ oid: sha256(big), size: big.length }] }, basic(ann.token))).json();
    const download = answer.objects[0].actions.download;
    t.ok(download.href.startsWith(`${s.endpoint}/${bucket}/`), 'the batch answer sends the download to the bucket');
    t.equal(download.expires_in, 900, 'valid for LFS_DOWNLOAD_EXPIRES (15 minutes by default)');
    t.notOk(download.header?.Authorization, 'the caller’s credentials do not go to the bucket');

    const cloned = path.join(g.dir, 'clone');
    const clone = await g.run(['clone', url, cloned]);
    t.equal(clone.code, 0, 'clone');
    t.notMatch(clone.stderr, /warning|error/i);
    t.ok(fs.readFileSync(path.join(cloned, 'model.bin')).equals(big), 'the clone has the real content');
    t.ok(fs.readFileSync(path.join(cloned, 'icon.bin')).equals(small));
    t.same(objectRequests(w, 'GET'), [], 'no object was downloaded through the node');

    // Wharf's own download route still answers, streaming from the bucket through the node.
    const own = await fetch(`${w.url}/acme/assets.git/info/lfs/objects/${sha256(small)}`, { headers: { authorization: basic(ann.token) } });
    t.equal(own.status, 200);
    t.ok(Buffer.from(await own.arrayBuffer()).equals(small), 'the node’s own route gives the same bytes');
  });

  t.test('an upload whose bytes do not match its oid is refused and nothing is stored', async (t) => {
    const { w, bucket } = await s3Wharf(t, s);
    const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
    await buildRepo(w, 'acme', 'assets');
    const auth = basic(ann.token);
    for (const length of [100_000, 9 * 1024 * 1024]) {
      const content = randomBytes(length);
      const oid = sha256(content);
      const answer = await (await batch(w, 'acme/assets', { operation: 'upload', objects: [{ oid, size: length }] }, auth)).json();
      const { upload, verify } = answer.objects[0].actions;
      t.equal(upload.href, `${w.url}/acme/assets.git/info/lfs/objects/${oid}`, 'uploads go to the node, never to a signed bucket address');
      const corrupt = Buffer.from(content);
      corrupt[length - 1] ^= 1;
      const put = (body: Buffer) =>
        fetch(upload.href, { method: 'PUT', headers: { ...upload.header, 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) });
      const bad = await put(corrupt);
      t.equal(bad.status, 422, `${length} bytes, wrong content: refused`);
      t.equal((await bad.json()).error.code, 'validation_failed');
      await t.rejects(s.client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(oid) })), { name: 'NotFound' }, 'HeadObject: 404 on the oid’s key');
      const listed = await s.client.send(new ListObjectsV2Command({ Bucket: bucket }));
      t.same(listed.Contents ?? [], [], 'no object of any key in the bucket');
      t.equal((await s.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads?.length ?? 0, 0, 'no multipart upload left open');
      t.equal((await w.running.services.db('lfs_objects').count('* as n').first())!.n, 0, 'nothing recorded');
      const notYet = await fetch(verify.href, {
        method: 'POST',
        headers: { ...verify.header, 'content-type': LFS },
        body: JSON.stringify({ oid, size: length }),
      });
      t.equal(notYet.status, 404, 'verify: no such object');
    }
  });

  t.test('a private repository’s object is never signed for another organization’s token', async (t) => {
    const { w } = await s3Wharf(t, s);
    const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
    const bob = await buildUser(w, 'bob', { org: 'globex', role: 'owner' });
    await buildRepo(w, 'acme', 'secret');
    await buildRepo(w, 'globex', 'mine');
    await buildRepo(w, 'globex', 'open', 'public');
    const content = randomBytes(2000);
    const oid = sha256(content);
    const up = await (await batch(w, 'acme/secret', { operation: 'upload', objects: [{ oid, size: 2000 }] }, basic(ann.token))).json();
    const upload = up.objects[0].actions.upload;
    t.equal((await fetch(upload.href, { method: 'PUT', headers: upload.header, body: new Uint8Array(content) })).status, 200);
    const mine = await (await batch(w, 'acme/secret', { operation: 'download', objects: [{ oid, size: 2000 }] }, basic(ann.token))).json();
    t.match(mine.objects[0].actions.download.href, /X-Amz-Signature=/, 'a member gets a signed address');

    const asked = [
      await batch(w, 'acme/secret', { operation: 'download', objects: [{ oid, size: 2000 }] }, basic(bob.token)),
      await batch(w, 'acme/secret', { operation: 'download', objects: [{ oid, size: 2000 }] }),
      await batch(w, 'globex/mine', { operation: 'download', objects: [{ oid, size: 2000 }] }, basic(bob.token)),
      await batch(w, 'globex/open', { operation: 'download', objects: [{ oid, size: 2000 }] }),
    ];
    t.same(
      asked.map((a) => a.status),
      [404, 401, 200, 200],
      'the private repository is hidden; bob’s own repositories answer',
    );
    const texts = await Promise.all(asked.map((a) => a.text()));
    for (const text of texts) t.notMatch(text, /X-Amz-|Signature|127\.0\.0\.1:\d+\/wharf-/, 'no signed address in the answer');
    t.same(
      texts.slice(2).map((text) => JSON.parse(text).objects[0].error?.code),
      [404, 404],
      'an object of another repository is “does not exist”, however its oid is known',
    );
    t.equal(
      (await fetch(`${w.url}/globex/mine.git/info/lfs/objects/${oid}`, { headers: { authorization: basic(bob.token) } })).status,
      404,
      'nor through the node’s own route',
    );
  });

  t.test('health reports the store and whether it answers, never a credential', async (t) => {
    const { w } = await s3Wharf(t, s);
    const health = await w.api('GET', '/api/v1/health', { token: null });
    t.equal(health.status, 200);
    t.same(health.body, { status: 'ok', database: 'ok', repos_dir: 'ok', lfs_store: { kind: 's3', status: 'ok' } });

    const missing = await startWharf(t, { env: { ...s.env('wharf-never-made') } });
    const down = await missing.api('GET', '/api/v1/health', { token: null });
    t.same(down.body.lfs_store, { kind: 's3', status: 'unreachable' }, 'a bucket that does not answer');
    t.equal(down.status, 200, 'the node still serves Git and the API');
    for (const text of [health.text, down.text]) {
      t.notMatch(text, /testing|test:tester/, 'no key in the answer');
    }
    t.notOk(
      [...w.logs, ...missing.logs].some((line) => line.includes('testing')),
      'the secret key is never logged',
    );
  });

  t.test('S3_CREATE_BUCKET creates a missing bucket at start', async (t) => {
    const bucket = `wharf-made-${randomBytes(4).toString('hex')}`;
    const w = await startWharf(t, { env: { ...s.env(bucket), S3_CREATE_BUCKET: 'true' } });
    await s.client.send(new HeadBucketCommand({ Bucket: bucket }));
    t.same((await w.api('GET', '/api/v1/health', { token: null })).body.lfs_store, { kind: 's3', status: 'ok' });
  });

  t.test('a node SIGKILLed mid-upload leaves no half object visible, and the client’s retry through another node succeeds', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-s3-kill-'));
    const database = await createTestDatabase(dir);
    t.teardown(async () => {
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const bucket = await s.bucket();
    const env = serveEnv(dir, database.url, { ...s.env(bucket), SECRET_KEY: randomBytes(32).toString('hex') });
    const a = await startServeProcess(env, { t });
    const token = a.token!;
    const api = (url: string, p: string, body: unknown) =>
      fetch(url + p, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.equal((await api(a.url, '/api/v1/orgs', { name: 'acme' })).status, 201);
    t.equal((await api(a.url, '/api/v1/orgs/acme/repos', { name: 'assets' })).status, 201);
    const content = randomBytes(20 * 1024 * 1024); // three parts of 8 MiB
    const oid = sha256(content);
    const auth = basic(token);

    // Half the object reaches node a, which sends its first part to the bucket; then a dies.
    const put = http.request(`${a.url}/acme/assets.git/info/lfs/objects/${oid}`, {
      method: 'PUT',
      headers: { authorization: auth, 'content-type': 'application/octet-stream', 'content-length': content.length },
    });
    const ended = new Promise<unknown>((resolve) => {
      put.on('error', resolve);
      put.on('response', resolve);
    });
    put.write(content.subarray(0, 12 * 1024 * 1024));
    const open = async () => (await s.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads?.length ?? 0;
    for (let i = 0; i < 200 && (await open()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    t.equal(await open(), 1, 'node a began a multipart upload');
    await a.kill();
    put.destroy();
    await ended;
    await t.rejects(s.client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(oid) })), { name: 'NotFound' }, 'no object under the oid’s key');
    t.same((await s.client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? [], [], 'nothing visible in the bucket');

    const b = await startServeProcess(env, { t });
    const answer = await (await batch(b, 'acme/assets', { operation: 'upload', objects: [{ oid, size: content.length }] }, auth)).json();
    const { upload, verify } = answer.objects[0].actions;
    t.ok(upload, 'the object is still to be uploaded');
    const retried = await fetch(upload.href, {
      method: 'PUT',
      headers: { ...upload.header, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(content),
    });
    t.equal(retried.status, 200, 'the retry through node b is stored');
    const verified = await fetch(verify.href, {
      method: 'POST',
      headers: { ...verify.header, 'content-type': LFS },
      body: JSON.stringify({ oid, size: content.length }),
    });
    t.equal(verified.status, 200, 'and verified');
    const down = await (await batch(b, 'acme/assets', { operation: 'download', objects: [{ oid, size: content.length }] }, auth)).json();
    const got = await fetch(down.objects[0].actions.download.href);
    t.ok(Buffer.from(await got.arrayBuffer()).equals(content), 'the bucket gives back the whole object');
    await b.stop();
  });
}
