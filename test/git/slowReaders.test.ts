// Clients that ask for a whole clone and never read the answer: anonymous ones, from many
// addresses, hold at most half of the backend slots, so signed-in clients keep working;
// and any answer whose client reads nothing for GIT_IDLE_TIMEOUT is cut, its backend
// killed and its slot freed, while a client that reads slowly keeps going.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { buildRepo, buildUser, startWharf, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { backendsAlive, gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';

const SLOTS = 4;

/** A public repository holding `mb` MB that does not compress, pushed by its owner; returns its tip. */
async function bigPublicRepo(t: TestLike, w: TestWharf, name: string, mb: number): Promise<string> {
  await buildRepo(w, 'demo', name, 'public');
  const g = gitClient(t);
  const work = path.join(g.dir, name);
  await g.ok(['init', '-q', work]);
  fs.writeFileSync(path.join(work, 'blob.bin'), randomBytes(mb * 1024 * 1024));
  const tip = await g.commit(work, 'big', {});
  await g.ok(['push', '-q', repoUrl(w, `demo/${name}`, w.adminToken), 'main'], { cwd: work });
  return tip;
}

/** A pkt-line. */
const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

/**
 * A client at `from` that sends a whole, valid clone request (upload-pack, want the tip,
 * done) and then reads `read` bytes of the answer at most (none by default) and stops.
 */
function slowReader(w: TestWharf, repo: string, tip: string, from: string, token?: string) {
  const { port } = new URL(w.url);
  const body = `${pkt(`want ${tip}\n`)}0000${pkt('done\n')}`;
  const socket = net.connect({ host: '127.0.0.1', port: Number(port), localAddress: from });
  let received = 0;
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  // The first bytes of the answer are read (so a test can tell it started), then nothing.
  socket.on('data', (c: Buffer) => {
    received += c.length;
    socket.pause();
  });
  const auth = token ? `Authorization: Basic ${Buffer.from(`x:${token}`).toString('base64')}\r\n` : '';
  socket.write(
    `POST /demo/${repo}.git/git-upload-pack HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}Content-Type: application/x-git-upload-pack-request\r\n` +
      `Accept: application/x-git-upload-pack-result\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  return {
    socket,
    received: () => received,
    closed: () => closed,
    /** Reads about `bytes` more of the answer, then stops reading again. */
    async readSome(bytes: number) {
      const target = received + bytes;
      while (received < target && !closed) {
        socket.resume();
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    /** Reads everything from now on. */
    readAll() {
      socket.removeAllListeners('data');
      socket.on('data', (c: Buffer) => (received += c.length));
      socket.resume();
    },
  };
}

/** `git ls-remote` of a repository by a signed-in user; resolves with the time it took, or rejects after `limitMs`. */
async function timedLsRemote(t: TestLike, url: string, limitMs: number): Promise<number> {
  const g = gitClient(t);
  const started = performance.now();
  const result = await Promise.race([g.run(['ls-remote', url]), new Promise<null>((resolve) => setTimeout(() => resolve(null), limitMs))]);
  if (result === null) throw new Error(`git ls-remote gave no answer within ${limitMs} ms`);
  if (result.code !== 0) throw new Error(`git ls-remote failed: ${result.stderr}`);
  return performance.now() - started;
}

t.test('anonymous slow readers from many addresses hold at most half the slots: signed-in clones keep working', async (t) => {
  const w = await startWharf(t, { env: { GIT_BACKEND_CONCURRENCY: String(SLOTS), GIT_IDLE_TIMEOUT: '10m' } });
  const tip = await bigPublicRepo(t, w, 'big', 24);
  // git sends credentials only when asked (a 401): to a public repository a client is anonymous, so the signed-in ones read private ones.
  await buildRepo(w, 'demo', 'other', 'private');
  await buildRepo(w, 'demo', 'third', 'internal');
  const { token } = await buildUser(w, 'ann', { org: 'demo', role: 'member' });
  // SLOTS / 2 slow readers on each of two addresses, then one from each of six more.
  const readers = ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3', ...['4', '5', '6', '7', '8', '9'].map((n) => `127.0.0.${n}`)].map((from) =>
    slowReader(w, 'big', tip, from),
  );
  await waitFor(() => backendsAlive() >= SLOTS / 2, { timeoutMs: 20_000, what: 'the anonymous half taken' });
  await waitFor(() => readers.filter((r) => r.received() > 0).length >= SLOTS / 2, { timeoutMs: 20_000, what: 'answers started' });
  t.equal(backendsAlive(), SLOTS / 2, 'anonymous requests run no more than half the backends');

  // Signed-in clients get the other half at once, while the slow readers hold theirs.
  for (let i = 0; i < 3; i++) {
    await timedLsRemote(t, repoUrl(w, 'demo/other', token), 15_000);
    await timedLsRemote(t, repoUrl(w, 'demo/third', token), 15_000);
  }
  t.pass('signed-in ls-remote answered every time');
  t.equal(readers.filter((r) => r.closed()).length, 0, 'the slow readers are still connected');
  t.equal(backendsAlive(), SLOTS / 2, 'and still hold the anonymous half');
  for (const r of readers) r.socket.destroy();
  await waitFor(() => backendsAlive() === 0, { timeoutMs: 20_000, what: 'every backend gone once the clients left' });
});

t.test('an answer its client stops reading is cut after GIT_IDLE_TIMEOUT; a slow reader keeps going', async (t) => {
  const w = await startWharf(t, { env: { GIT_BACKEND_CONCURRENCY: String(SLOTS), GIT_IDLE_TIMEOUT: '2s' } });
  const tip = await bigPublicRepo(t, w, 'big', 24);
  const { token } = await buildUser(w, 'ann', { org: 'demo', role: 'member' });

  // Signed-in clients that stop reading, as many as there are slots: every slot held.
  const stalled = Array.from({ length: SLOTS }, () => slowReader(w, 'big', tip, '127.0.0.2', token));
  await waitFor(() => stalled.every((r) => r.received() > 0), { timeoutMs: 20_000, what: 'every answer started' });
  t.equal(backendsAlive(), SLOTS, 'every slot is held');
  await waitFor(() => backendsAlive() === 0, { timeoutMs: 20_000, what: 'the stalled answers cut and their backends killed' });
  t.pass('each stalled answer was cut and its backend killed');
  // What the kernel still held reaches the clients, then the end: each answer was cut short.
  for (const r of stalled) r.readAll();
  await waitFor(() => stalled.every((r) => r.closed()), { timeoutMs: 20_000, what: 'the connections closed' });
  for (const r of stalled) t.ok(r.received() < 24 * 1024 * 1024, `cut short after ${r.received()} bytes`);
  t.ok(
    w.logs.some((l) => l.includes('git answer cut')),
    'the cut is logged',
  );
  await timedLsRemote(t, repoUrl(w, 'demo/big', token), 15_000);
  t.pass('the freed slots serve the next client (an anonymous one: git asks a public repository without credentials)');

  // A client reading a little at a time (1 MiB each quarter second, far below what loopback
  // carries), slower than the answer is made, is never cut. (What counts is bytes the server
  // could write: the socket buffers, several MB on loopback, must drain within the deadline.)
  const slow = slowReader(w, 'big', tip, '127.0.0.3', token);
  const until = Date.now() + 6_000; // three idle deadlines
  while (Date.now() < until) {
    await slow.readSome(1024 * 1024);
    await new Promise((r) => setTimeout(r, 250));
  }
  t.notOk(slow.closed(), 'a slow reader is still connected after three idle deadlines');
  t.ok(slow.received() > 4 * 1024 * 1024, 'and has been reading all along');
  const before = slow.received();
  slow.readAll();
  await waitFor(() => slow.closed() || slow.received() > 24 * 1024 * 1024, { timeoutMs: 30_000, what: 'the rest of the answer' });
  t.ok(slow.received() > 24 * 1024 * 1024, `the whole pack came (${before} bytes slowly, ${slow.received()} in all)`);
  slow.socket.destroy();
});
