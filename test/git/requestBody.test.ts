import t from 'tap';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { backendsAlive, gitClient, repoUrl } from '../helpers/git.ts';
import { quietPeriod, waitFor } from '../helpers/wait.ts';
import { bareDir, commitFiles, setBranch } from '../producers/helpers.ts';

/**
 * A valid gzip stream of `mib` MiB of zeros, about 1 KiB per MiB: one flushed deflate
 * block of 1 MiB repeated (each is self-contained), a final empty block, the real trailer.
 */
function gzipBomb(mib: number): Buffer {
  const zero = Buffer.alloc(1 << 20);
  const block = zlib.deflateRawSync(zero, { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = zlib.crc32(zero, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((mib * (1 << 20)) % 2 ** 32, 4);
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]), ...Array<Buffer>(mib).fill(block), Buffer.from([3, 0]), trailer]);
}

const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;

async function publicRepo(w: TestWharf): Promise<string> {
  const repo = await buildRepo(w, 'acme', 'app', 'public');
  const dir = bareDir(w, repo);
  const sha = await commitFiles(dir, [], { 'a.txt': 'hello\n' }, 'root');
  await setBranch(dir, 'main', sha);
  return sha;
}

const post = (w: TestWharf, service: string, body: Buffer, headers: Record<string, string> = {}) =>
  w.api('POST', `/acme/app.git/${service}`, { token: null, rawBody: body, headers: { 'content-type': `application/x-${service}-request`, ...headers } });

t.test('a gzip bomb (1 MiB inflating to 1 GiB) is a 413 before git runs long; the server keeps serving', async (t) => {
  const w = await startWharf(t, { workers: [] });
  await publicRepo(w);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const bomb = gzipBomb(1024);
  t.ok(bomb.length < 1.1 * 1024 * 1024, `the bomb is ${bomb.length} bytes`);

  const fetchBomb = await post(w, 'git-upload-pack', bomb, { 'content-encoding': 'gzip' });
  t.equal(fetchBomb.status, 413, 'anonymous upload-pack');
  t.equal(fetchBomb.body?.error?.code, 'payload_too_large');
  t.match(fetchBomb.body?.error?.message, /10 MiB/);
  const pushBomb = await post(w, 'git-receive-pack', bomb, { 'content-encoding': 'x-gzip', authorization: `Bearer ${token}` });
  // receive-pack stops at the first bad pkt-line; either way it never gets more than the cap.
  t.ok([400, 413].includes(pushBomb.status), `receive-pack answers a 4xx at once (${pushBomb.status})`);
  const plainOver = await post(w, 'git-upload-pack', Buffer.alloc(11 * 1024 * 1024, '0'));
  t.equal(plainOver.status, 413, "a plain upload-pack body over the backend's own 10 MiB is a 413 too, not a 5xx");
  const notGzip = await post(w, 'git-upload-pack', Buffer.from('this is not gzip at all'), { 'content-encoding': 'gzip' });
  t.equal(notGzip.status, 400, 'a body that is not gzip is a 400');

  const g = gitClient(t);
  const clone = await g.run(['clone', '-q', repoUrl(w, 'acme/app'), path.join(g.dir, 'after')]);
  t.equal(clone.code, 0, `a clone still works: ${clone.stderr}`);
});

t.test('a gzip request under the cap is inflated here and answered by git', async (t) => {
  const w = await startWharf(t, { workers: [] });
  const sha = await publicRepo(w);
  const request = Buffer.from(pkt(`want ${sha}\n`) + '0000' + pkt('done\n'));
  const plain = await post(w, 'git-upload-pack', request);
  const gzipped = await post(w, 'git-upload-pack', zlib.gzipSync(request), { 'content-encoding': 'gzip' });
  for (const [what, answer] of [
    ['plain', plain],
    ['gzip', gzipped],
  ] as const) {
    t.equal(answer.status, 200, what);
    t.equal(answer.headers.get('content-type'), 'application/x-git-upload-pack-result', what);
    t.ok(answer.text.startsWith('0008NAK\nPACK'), `${what}: NAK then the pack`);
  }
});

t.test('backends run at most GIT_BACKEND_CONCURRENCY at once; the others wait and then succeed', async (t) => {
  const w = await startWharf(t, { workers: [], env: { GIT_BACKEND_CONCURRENCY: '1' } });
  await publicRepo(w);
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  // Holds the only backend: a push whose body never finishes (a fetch negotiation is read whole before it takes a slot).
  const url = new URL(`${w.url}/acme/app.git/git-receive-pack`);
  const auth = `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;
  const held = http.request(url, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/x-git-receive-pack-request', 'content-length': '1000' },
  });
  held.on('error', () => {});
  held.write('00a0');
  await waitFor(() => backendsAlive() === 1, { intervalMs: 20, what: 'the held push to start its backend' });
  let answered = false;
  const waiting = w.api('GET', '/acme/app.git/info/refs?service=git-upload-pack', { token: null }).then((a) => ((answered = true), a));
  // A bounded quiet period: a request waiting for a backend slot leaves no state to await (no row, no process, no metric); it must stay unanswered meanwhile.
  await quietPeriod(700);
  t.notOk(answered, 'a second request waits while the only backend is busy');
  held.destroy(); // the client leaves: its backend is killed and the slot freed
  const second = await waiting;
  t.equal(second.status, 200, 'then it is answered');

  const g = gitClient(t);
  const clones = await Promise.all([1, 2, 3, 4].map((i) => g.run(['clone', '-q', repoUrl(w, 'acme/app'), path.join(g.dir, `c${i}`)])));
  t.same(
    clones.map((c) => c.code),
    [0, 0, 0, 0],
    'four clones at once through one backend all succeed',
  );
  const work = path.join(g.dir, 'c1');
  await g.commit(work, 'more');
  const push = await g.run(['push', '-q', repoUrl(w, 'acme/app', token), 'HEAD:main'], { cwd: work });
  t.equal(push.code, 0, `a push works: ${push.stderr}`);
  const fetch = await g.run(['fetch', '-q', 'origin'], { cwd: path.join(g.dir, 'c2') });
  t.equal(fetch.code, 0, 'a fetch works');
});
