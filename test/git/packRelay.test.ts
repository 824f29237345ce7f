// A clone's pack past its first MiB goes from the backend to the client's socket through a
// relay process (transport/git/packRelay.ts), so the server's own event loop carries none of
// it; a fetch's smaller answers and every other request are carried as before.
import fs from 'node:fs';
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
});

/**
 * Bytes the process `pid` itself read from its children's output, out of `strace -f -yy -e
 * trace=read` lines: reads of pipes and of Unix sockets (libuv gives a child's standard
 * output a socket pair), not of TCP sockets or files, and not its children's own reads. A
 * read another thread's call cut in two is counted from its `resumed` half.
 */
function pipeBytesRead(lines: string[], pid: number): number {
  let total = 0;
  let pending = false;
  for (const line of lines) {
    if (!line.startsWith(`${pid} `)) continue;
    const call = /^\d+ +read\(\d+<([A-Za-z-]+):/.exec(line);
    if (call) {
      const fromChild = call[1] === 'pipe' || call[1] === 'UNIX-STREAM';
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
    t.ok(read > 0 && read < 4 * 1024 * 1024, `the server read ${read} bytes of its children's output, not the 24 MB pack`);

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
