import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import t from 'tap';
import { HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startSwift, type TestSwift } from '../helpers/swift.ts';
import { createS3LfsStore, objectKey } from '../../src/lfs/s3Store.ts';
import { LfsIntegrityError } from '../../src/lfs/lfsStore.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

const swift = await startSwift(t);
if (swift) tests(swift);

/** Keys in the bucket, and multipart uploads begun and never completed or aborted. */
async function leftovers(s: TestSwift, bucket: string) {
  const objects = await s.client.send(new ListObjectsV2Command({ Bucket: bucket }));
  const uploads = await s.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return { keys: (objects.Contents ?? []).map((o) => o.Key), uploads: (uploads.Uploads ?? []).length };
}

function tests(s: TestSwift) {
  t.test('what is written comes back, in one PUT and in parts, at lfs/ab/cd/<oid>', async (t) => {
    const bucket = await s.bucket();
    const store = createS3LfsStore({ ...s.options(bucket), partSize: 5 * MiB });
    for (const length of [0, 1000, 12 * MiB]) {
      const content = randomBytes(length);
      const oid = sha256(content);
      t.equal(await store.size(oid), null, 'absent before');
      await store.write(oid, length, Readable.from([content.subarray(0, 777), content.subarray(777)]));
      t.equal(await store.size(oid), length, `${length} bytes stored`);
      t.ok((await buffer(await store.open(oid))).equals(content), 'open streams the same bytes');
      const head = await s.client.send(new HeadObjectCommand({ Bucket: bucket, Key: `lfs/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}` }));
      t.equal(head.ContentLength, length, 'kept under lfs/ab/cd/<oid>');
    }
    t.same((await leftovers(s, bucket)).uploads, 0, 'no multipart upload left open');
  });

  t.test('content that does not match its oid, too short or too long, or a source that fails is refused and nothing is visible', async (t) => {
    const bucket = await s.bucket();
    const store = createS3LfsStore({ ...s.options(bucket), partSize: 5 * MiB });
    for (const length of [5000, 11 * MiB]) {
      const content = randomBytes(length);
      const oid = sha256(content);
      const corrupt = Buffer.from(content);
      corrupt[length - 1] ^= 1; // the last byte: every part but the last is already sent when it arrives
      const cases: [string, Readable, number][] = [
        ['same size, other content', Readable.from([corrupt]), length],
        ['short', Readable.from([content.subarray(1)]), length],
        ['long', Readable.from([content, Buffer.from('x')]), length],
        ['right size announced, fewer bytes', Readable.from([content.subarray(0, length - 10)]), length],
      ];
      for (const [name, source, size] of cases) {
        const refused = await store.write(oid, size, source).catch((err: unknown) => err);
        t.ok(refused instanceof LfsIntegrityError, `${length} bytes, ${name}: refused (LfsIntegrityError)`);
        t.equal(await store.size(oid), null, `${name}: nothing under the oid's key`);
      }
      const failing = Readable.from(
        (async function* () {
          yield content.subarray(0, 6 * MiB > length ? 100 : 6 * MiB);
          throw new Error('the client went away');
        })(),
      );
      await t.rejects(store.write(oid, length, failing), { message: 'the client went away' }, `${length} bytes, aborted source: refused with its error`);
      t.equal(await store.size(oid), null, 'aborted: nothing stored');
    }
    t.same(await leftovers(s, bucket), { keys: [], uploads: 0 }, 'no object and no open multipart upload left in the bucket');

    const content = randomBytes(2000);
    const oid = sha256(content);
    await store.write(oid, content.length, Readable.from([content]));
    t.ok((await store.write(oid, content.length, Readable.from([randomBytes(2000)])).catch((err: unknown) => err)) instanceof LfsIntegrityError);
    t.ok((await buffer(await store.open(oid))).equals(content), 'a refused upload leaves the stored object as it was');
  });

  t.test('a download address is a presigned GET of the object alone, valid for the configured time', async (t) => {
    const bucket = await s.bucket();
    const store = createS3LfsStore({ ...s.options(bucket), downloadExpiresSec: 600 });
    const content = randomBytes(4000);
    const oid = sha256(content);
    await store.write(oid, content.length, Readable.from([content]));
    const direct = await store.downloadHref!(oid);
    t.equal(direct.expiresIn, 600);
    t.ok(direct.href.startsWith(`${s.endpoint}/${bucket}/${objectKey(oid)}?`), 'path-style, on the endpoint');
    t.match(direct.href, /X-Amz-Signature=/);
    t.notMatch(direct.href, /testing/, 'the secret key is not in the address');
    const got = await fetch(direct.href);
    t.equal(got.status, 200);
    t.ok(Buffer.from(await got.arrayBuffer()).equals(content), 'the bucket gives the bytes, no credentials needed');
    const other = new URL(direct.href);
    other.pathname = `/${bucket}/${objectKey('c'.repeat(64))}`;
    t.equal((await fetch(other)).status, 403, 'the signature does not open another key');

    const short = createS3LfsStore({ ...s.options(bucket), downloadExpiresSec: 1 });
    const expiring = await short.downloadHref!(oid);
    await new Promise((r) => setTimeout(r, 2500));
    t.equal((await fetch(expiring.href)).status, 403, 'an expired address is refused');
  });

  t.test('health: the bucket answers, or not; never a credential', async (t) => {
    const bucket = await s.bucket();
    t.same(await createS3LfsStore(s.options(bucket)).health(), { kind: 's3', status: 'ok' });
    t.same(await createS3LfsStore(s.options('no-such-bucket-here')).health(), { kind: 's3', status: 'unreachable' }, 'a missing bucket');
    const started = Date.now();
    const closed = createS3LfsStore({ ...s.options(bucket), endpoint: 'http://127.0.0.1:9' });
    t.same(await closed.health(), { kind: 's3', status: 'unreachable' }, 'nothing listening');
    t.ok(Date.now() - started < 5000, 'answered within the health timeout');
  });
}
