// A clone's pack past its first MiB goes from the backend to the client's socket through a
// relay process (transport/git/packRelay.ts), so the server's own event loop carries none of
// it; a fetch's smaller answers and every other request are carried as before.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { asksForPack } from '../../src/transport/git/packRelay.ts';
import { HAS_STRACE, traceFileCalls } from '../helpers/strace.ts';
import { servedPush } from '../helpers/servedPush.ts';

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
const WANT = `want ${'a'.repeat(40)}\n`;

t.test('a fetch request asks for its pack when it ends the negotiation with done, in either protocol version', async (t) => {
  const v2 = (lines: string[]) => Buffer.from(`${pkt('command=fetch\n')}${pkt('object-format=sha1\n')}0001${lines.map(pkt).join('')}0000`);
  t.ok(asksForPack(v2([WANT, 'done\n'])), 'version 2, done');
  t.notOk(asksForPack(v2([WANT, `have ${'b'.repeat(40)}\n`])), 'version 2, a negotiation round without done');
  t.ok(asksForPack(Buffer.from(`${pkt(WANT)}0000${pkt('done\n')}`)), 'version 0, done after the flush');
  t.notOk(asksForPack(Buffer.from(`${pkt(WANT)}0000${pkt(`have ${'b'.repeat(40)}\n`)}0000`)), 'version 0, haves without done');
  t.notOk(asksForPack(Buffer.from(`${pkt(WANT)}zzzz${pkt('done\n')}`)), 'nothing after a packet that does not parse counts');
  t.notOk(asksForPack(Buffer.from(`${pkt('want-ref refs/heads/done\n')}0000`)), 'a ref named done is not the line');
  t.notOk(asksForPack(Buffer.alloc(0)), 'an empty body');
  t.notOk(asksForPack(Buffer.from('0x09done\n')), 'a length that is not four hex digits is no packet');
});

/**
 * Bytes the process `pid` itself read from its children's output, out of `strace -f -yy -e
 * trace=read` lines: reads of pipes and of Unix sockets (libuv gives a child's standard
 * output a socket pair), not of TCP sockets (when strace can tell them apart) or files, and
 * not its children's own reads. A
 * read another thread's call cut in two is counted from its `resumed` half.
 */
function pipeBytesRead(lines: string[], pid: number): number {
  let total = 0;
  let pending = false;
  for (const line of lines) {
    if (!line.startsWith(`${pid} `)) continue;
    const call = /^\d+ +read\(\d+<([A-Za-z-]+):/.exec(line);
    if (call) {
      // `socket` when strace could not ask the kernel what a socket is (it then names none, TCP ones included).
      const fromChild = ['pipe', 'UNIX-STREAM', 'UNIX', 'socket'].includes(call[1]);
      pending = fromChild && line.endsWith('<unfinished ...>');
      if (fromChild) total += Number(/\)\s+= (\d+)$/.exec(line)?.[1] ?? 0);
      continue;
    }
    const resumed = /^\d+ +<\.\.\. read resumed>.*\)\s+= (\d+)$/.exec(line);
    if (resumed && pending) total += Number(resumed[1]);
    if (resumed) pending = false;
  }
  return total;
}

/** How many reads the process `pid` made of each kind of descriptor strace named (what a failing count is made of). */
function readKinds(lines: string[], pid: number): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const line of lines) {
    const kind = /^(\d+) +(?:read\(\d+<([^:>]+)|<\.\.\. read resumed>)/.exec(line);
    if (kind && Number(kind[1]) === pid) kinds[kind[2] ?? 'resumed'] = (kinds[kind[2] ?? 'resumed'] ?? 0) + 1;
  }
  return kinds;
}

t.test(
  'a clone of 24 MB takes its pack from a relay: the server reads at most a few MB of it, and the clone is whole',
  { skip: HAS_STRACE ? false : 'strace is not installed' },
  async (t) => {
    const { dir, node, g, work, url } = await servedPush(t, 'pack-relay');
    const pid = node.child.pid!;
    const traced = () => traceFileCalls(t, pid, dir, 'trace=read,execve', '-yy');
    const blob = randomBytes(24 * 1024 * 1024);
    fs.writeFileSync(path.join(work, 'blob.bin'), blob);
    const tip = await g.commit(work, 'big', {});
    await g.ok(['push', '-q', url, 'main'], { cwd: work });

    const clone = path.join(dir, 'clone.git');
    let trace = await traced();
    await g.ok(['clone', '-q', '--mirror', url, clone]);
    let lines = await trace.stop();
    t.equal((await g.ok(['rev-parse', 'main'], { cwd: clone })).trim(), tip, 'the clone has the tip');
    await g.ok(['fsck', '--full'], { cwd: clone });
    t.equal(Number((await g.ok(['cat-file', '-s', `${tip}:blob.bin`], { cwd: clone })).trim()), blob.length, 'and the whole blob');
    t.ok(
      lines.some((line) => /execve\("[^"]*perl"/.test(line) && !/ENOENT/.test(line)),
      'a relay ran for the answer',
    );
    const read = pipeBytesRead(lines, pid);
    t.ok(read > 0 && read < 4 * 1024 * 1024, `the server read ${read} bytes of its children's output, not the 24 MB pack`, {
      kinds: readKinds(lines, pid),
      lines: lines.length,
    });

    // A fetch of one small commit is carried by the server as before: no relay.
    fs.writeFileSync(path.join(work, 'small.txt'), 'small\n');
    const next = await g.commit(work, 'small', {});
    await g.ok(['push', '-q', url, 'main'], { cwd: work });
    trace = await traced();
    await g.ok(['fetch', '-q', url, '+refs/heads/*:refs/heads/*'], { cwd: clone });
    lines = await trace.stop();
    t.equal((await g.ok(['rev-parse', 'main'], { cwd: clone })).trim(), next, 'the fetch brought the new commit');
    t.notOk(
      lines.some((line) => /execve\("[^"]*perl"/.test(line) && !/ENOENT/.test(line)),
      'and no relay ran for its small answer',
    );
  },
);

/**
 * A clone request (protocol version 0, no capabilities: the answer is `NAK` and the bare
 * pack) read by a client that takes 16 KiB at a time with a pause after each, so the server
 * meets backpressure again and again before and around the hand-over; resolves with the
 * answer's headers and body once the server closes the connection.
 */
function slowClone(serverUrl: string, token: string, tip: string): Promise<{ head: string; body: Buffer }> {
  const { port } = new URL(serverUrl);
  const request = `${pkt(`want ${tip}\n`)}0000${pkt('done\n')}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    const chunks: Buffer[] = [];
    socket.on('error', reject);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      socket.pause();
      setTimeout(() => socket.resume(), 2);
    });
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const at = all.indexOf('\r\n\r\n');
      resolve({ head: all.toString('latin1', 0, at), body: all.subarray(at + 4) });
    });
    socket.setNoDelay(true);
    socket.write(
      `POST /demo/app.git/git-upload-pack HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Basic ${Buffer.from(`x:${token}`).toString('base64')}\r\n` +
        `Content-Type: application/x-git-upload-pack-request\r\nContent-Length: ${request.length}\r\n\r\n${request}`,
    );
  });
}

t.test('a client that reads slowly gets every byte of a relayed pack, in order', async (t) => {
  const { dir, node, g, work, url } = await servedPush(t, 'pack-relay-slow');
  const blob = randomBytes(6 * 1024 * 1024);
  fs.writeFileSync(path.join(work, 'blob.bin'), blob);
  const tip = await g.commit(work, 'big', {});
  await g.ok(['push', '-q', url, 'main'], { cwd: work });
  for (let i = 0; i < 3; i++) {
    const { head, body } = await slowClone(node.url, node.token!, tip);
    t.match(head, /^HTTP\/1\.1 200/, 'the answer is a 200');
    t.match(head, /\r\nConnection: close/i, 'sent to the end of the connection');
    t.notMatch(head, /Transfer-Encoding/i, 'without chunks');
    t.equal(body.toString('latin1', 0, 8), '0008NAK\n', 'the answer starts with NAK');
    // index-pack checks every object of the pack and its trailing checksum.
    const repo = path.join(dir, `slow-${i}.git`);
    await g.ok(['init', '-q', '--bare', repo]);
    await g.ok(['index-pack', '--stdin'], { cwd: repo, input: body.subarray(8) });
    t.equal(Number((await g.ok(['cat-file', '-s', `${tip}:blob.bin`], { cwd: repo })).trim()), blob.length, `read slowly, whole (${i + 1})`);
  }
});
