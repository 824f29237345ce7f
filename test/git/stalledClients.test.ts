import t from 'tap';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { buildRepo, buildUser, startWharf, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { quietPeriod, waitFor } from '../helpers/wait.ts';
import { bareDir, commitFiles, setBranch } from '../producers/helpers.ts';

async function publicRepo(w: TestWharf, name: string): Promise<void> {
  const repo = await buildRepo(w, 'acme', name, 'public');
  const dir = bareDir(w, repo);
  await setBranch(dir, 'main', await commitFiles(dir, [], { 'a.txt': `${name}\n` }, 'root'));
}

/** A raw connection to the server that sends `head` (and `body`), then nothing more; resolves when the server has closed it, with what it answered. */
function stalled(w: TestWharf, text: string): { closed: Promise<string>; socket: net.Socket } {
  const { port } = new URL(w.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  let answer = '';
  socket.on('data', (c) => (answer += c));
  socket.write(text);
  return { socket, closed: new Promise((resolve) => socket.on('close', () => resolve(answer))) };
}

/** The first bytes of an upload-pack request that announces more than it sends. */
const uploadPackStart = (repo: string) =>
  `POST /acme/${repo}.git/git-upload-pack HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-git-upload-pack-request\r\nContent-Length: 1000\r\n\r\n0032want `;

/** Rejects if `work` has not settled within `ms`: the bound is generous, far under the idle deadline the stalled clients would need to be cut. */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    work.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms))),
  ]);
}

t.test('GIT_BACKEND_CONCURRENCY idle upload-pack clients hold no backend: ls-remote and a clone of another repository work', async (t) => {
  const w = await startWharf(t, { workers: [], env: { GIT_BACKEND_CONCURRENCY: '4', REQUEST_IDLE_TIMEOUT: '30s', REQUEST_BODY_TIMEOUT: '60s' } });
  await publicRepo(w, 'app');
  await publicRepo(w, 'other');
  const idle = [1, 2, 3, 4].map(() => stalled(w, uploadPackStart('app')));
  t.teardown(() => idle.forEach((c) => c.socket.destroy()));
  // Every stalled client is connected and has been read past its lookup (where a backend slot used to be taken).
  await waitFor(async () => (await new Promise<number>((r) => w.running.server.getConnections((_, n) => r(n)))) >= 4, {
    intervalMs: 10,
    what: 'the four stalled clients to connect',
  });
  // A bounded quiet period: the server reading a stalled request past its lookup leaves no state to await (the fix is that it takes no backend).
  await quietPeriod(500);

  const g = gitClient(t);
  const lsRemote = await within(10_000, 'git ls-remote', g.run(['ls-remote', repoUrl(w, 'acme/app')]));
  t.equal(lsRemote.code, 0, `ls-remote works: ${lsRemote.stderr}`);
  t.match(lsRemote.stdout, /refs\/heads\/main/);
  const clone = await within(10_000, 'git clone', g.run(['clone', '-q', repoUrl(w, 'acme/other'), path.join(g.dir, 'other')]));
  t.equal(clone.code, 0, `a clone of another repository works: ${clone.stderr}`);
  for (const c of idle) t.notOk(c.socket.destroyed, 'the stalled clients are still waiting for their idle deadline');
});

t.test('stalled and trickling clients are closed within the deadlines, with a 408 where an answer can be sent', async (t) => {
  const w = await startWharf(t, {
    workers: [],
    env: { GIT_BACKEND_CONCURRENCY: '4', REQUEST_IDLE_TIMEOUT: '1s', REQUEST_BODY_TIMEOUT: '3s', REQUEST_HEADERS_TIMEOUT: '2s' },
  });
  await publicRepo(w, 'app');
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const basic = `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;

  const idleUploadPack = stalled(w, uploadPackStart('app'));
  const partialHeaders = stalled(w, 'GET /api/v1/meta HTTP/1.1\r\nHost: x\r\nX-Slow: ');
  const idleJson = stalled(
    w,
    `POST /api/v1/orgs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"lo`,
  );
  // Refused before its body is read: answered, then closed rather than read to its end.
  const refused = stalled(w, 'POST /api/v1/orgs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n');
  const idlePush = stalled(
    w,
    `POST /acme/app.git/git-receive-pack HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic}\r\nContent-Type: application/x-git-receive-pack-request\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n00a0\r\n`,
  );
  const idleLfs = stalled(
    w,
    `PUT /acme/app.git/info/lfs/objects/${'a'.repeat(64)} HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic}\r\nContent-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\nabc`,
  );
  // A trickle defeats an idle deadline; the total deadline on bodies read whole ends it.
  const trickle = stalled(
    w,
    'POST /acme/app.git/git-upload-pack HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-git-upload-pack-request\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  const drip = setInterval(() => trickle.socket.writable && trickle.socket.write('1\r\n0\r\n'), 200);
  t.teardown(() => clearInterval(drip));

  const answers = await within(
    15_000,
    'stalled clients',
    Promise.all([idleUploadPack, partialHeaders, idleJson, idlePush, idleLfs, trickle, refused].map(async (c) => [await c.closed, seconds()] as const)),
  );
  const [uploadPack, headers, json, push, lfs, dripped, early] = answers;
  t.match(uploadPack[0], /^HTTP\/1\.1 408 /, 'an idle upload-pack body is a 408');
  t.match(uploadPack[0], /request_timeout/);
  t.ok(uploadPack[1] < 4, `closed after the idle deadline (${uploadPack[1].toFixed(1)} s)`);
  t.match(headers[0], /^(HTTP\/1\.1 408 |)/, 'partial headers: closed (with a bare 408)');
  t.ok(headers[1] < 5, `partial headers closed within the headers deadline (${headers[1].toFixed(1)} s)`);
  t.match(json[0], /^HTTP\/1\.1 408 /, 'an idle JSON body is a 408');
  t.ok(json[1] >= 0.9 && json[1] < 4, `(${json[1].toFixed(1)} s)`);
  t.match(early[0], /^HTTP\/1\.1 401 /, 'a request refused before its body is read is answered');
  t.match(early[0], /connection: close/i, 'and its connection closed');
  t.ok(early[1] < 1, `at once (${early[1].toFixed(1)} s)`);
  t.match(push[0], /^HTTP\/1\.1 408 /, 'an idle push body is a 408');
  t.ok(push[1] < 4, `(${push[1].toFixed(1)} s)`);
  t.match(lfs[0], /^HTTP\/1\.1 408 /, 'an idle LFS upload is a 408');
  t.ok(lfs[1] < 4, `(${lfs[1].toFixed(1)} s)`);
  t.match(dripped[0], /^HTTP\/1\.1 408 /, 'a trickling upload-pack body is a 408 at the total deadline');
  t.ok(dripped[1] >= 2.5 && dripped[1] < 6, `after the total deadline, not the idle one (${dripped[1].toFixed(1)} s)`);

  const g = gitClient(t);
  const lsRemote = await g.run(['ls-remote', repoUrl(w, 'acme/app')]);
  t.equal(lsRemote.code, 0, 'git still works afterwards');
});

/** A loopback proxy to the server that passes what the client sends in `piece`-byte pieces, one every `everyMs`: a slow but live link. */
async function slowLink(t: TestLike, w: TestWharf, piece: number, everyMs: number): Promise<string> {
  const target = new URL(w.url);
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port), '127.0.0.1');
    const queue: Buffer[] = [];
    let ended = false;
    const pace = setInterval(() => {
      const next = queue.shift();
      if (next) server.write(next);
      else if (ended) server.end();
    }, everyMs);
    client.on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += piece) queue.push(chunk.subarray(at, at + piece));
    });
    client.on('end', () => (ended = true));
    server.pipe(client);
    for (const s of [client, server]) {
      s.on('error', () => {});
      s.on('close', () => {
        clearInterval(pace);
        client.destroy();
        server.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => proxy.close(resolve)));
  return `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
}

t.test('a push over a slow but live link outlasts the deadlines of bodies read whole and works', async (t) => {
  const w = await startWharf(t, { workers: [], env: { REQUEST_IDLE_TIMEOUT: '1s', REQUEST_BODY_TIMEOUT: '1s', REQUEST_HEADERS_TIMEOUT: '1s' } });
  await publicRepo(w, 'app');
  const { token } = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['clone', '-q', repoUrl(w, 'acme/app'), work]);
  const sha = await g.commit(work, 'big', { 'big.bin': randomBytes(200_000) });
  const slow = (await slowLink(t, w, 8192, 150)).replace('http://', `http://x:${token}@`);
  const started = performance.now();
  const push = await g.run(['push', '-q', `${slow}/acme/app.git`, 'HEAD:main'], { cwd: work });
  const seconds = (performance.now() - started) / 1000;
  t.equal(push.code, 0, `the push works: ${push.stderr}`);
  t.ok(seconds > 2, `it took longer than the 1 s deadlines (${seconds.toFixed(1)} s)`);
  const remote = await g.ok(['ls-remote', repoUrl(w, 'acme/app'), 'refs/heads/main']);
  t.equal(remote.split('\t')[0], sha, 'main is the pushed commit');
});
