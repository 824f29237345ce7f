import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import t, { type Test } from 'tap';
import { createFsLfsStore } from '../../src/lfs/fsStore.ts';
import { LfsIntegrityError, type LfsStore } from '../../src/lfs/lfsStore.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A file-system store in a directory of its own, removed after the test. */
function freshStore(t: Test): { dir: string; store: LfsStore } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-lfs-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, store: createFsLfsStore(dir) };
}

t.test('an object the store does not hold has no size', async (t) => {
  const { store } = freshStore(t);
  t.equal(await store.size('a'.repeat(64)), null);
  t.equal(await store.size('not an oid'), null, 'nor has a malformed oid');
});

t.test('what is written comes back: its size and its content, kept at ab/cd/<oid>', async (t) => {
  const { dir, store } = freshStore(t);
  const content = randomBytes(100_000);
  const oid = sha256(content);
  await store.write(oid, content.length, Readable.from([content.subarray(0, 1000), content.subarray(1000)]));
  t.equal(await store.size(oid), content.length);
  t.ok((await buffer(await store.open(oid))).equals(content), 'open streams the same bytes');
  t.ok(fs.existsSync(path.join(dir, oid.slice(0, 2), oid.slice(2, 4), oid)), 'the layout of LFS_DIR is unchanged');
  t.same(fs.readdirSync(path.join(dir, 'tmp')), [], 'no temporary file left');
  t.equal(store.downloadHref, undefined, 'no direct address: clients use the LFS routes');
});

t.test('content that does not match its oid or size is refused and nothing is stored', async (t) => {
  const { dir, store } = freshStore(t);
  const content = randomBytes(5000);
  const oid = sha256(content);
  const corrupt = Buffer.from(content);
  corrupt[42] ^= 1;
  const cases: [string, Buffer, number][] = [
    ['same size, other content', corrupt, content.length],
    ['shorter than announced', content.subarray(1), content.length],
    ['longer than announced', Buffer.concat([content, Buffer.from('x')]), content.length],
    ['announced smaller than it is', content, content.length - 1],
  ];
  for (const [name, bytes, size] of cases) {
    const refused = await store.write(oid, size, Readable.from([bytes])).catch((err: unknown) => err);
    t.ok(refused instanceof LfsIntegrityError, `${name}: LfsIntegrityError`);
    t.equal(await store.size(oid), null, `${name}: nothing stored`);
  }
  t.same(fs.readdirSync(path.join(dir, 'tmp')), [], 'no temporary file left');
});

t.test('a source that fails midway stores nothing', async (t) => {
  const { dir, store } = freshStore(t);
  const content = randomBytes(5000);
  const oid = sha256(content);
  async function* cutShort() {
    yield content.subarray(0, 1000);
    throw new Error('connection reset');
  }
  await t.rejects(store.write(oid, content.length, Readable.from(cutShort())), { message: 'connection reset' });
  t.equal(await store.size(oid), null);
  t.same(fs.readdirSync(path.join(dir, 'tmp')), [], 'no temporary file left');
});
