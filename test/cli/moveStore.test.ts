import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import t from 'tap';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startSwift, type TestSwift } from '../helpers/swift.ts';
import { asUserRuns, runCli, WHARF_BIN } from '../helpers/cli.ts';
import { createFsLfsStore } from '../../src/lfs/fsStore.ts';
import { objectKey } from '../../src/lfs/s3Store.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const swift = await startSwift(t);
if (swift) tests(swift);

/** Every key in a bucket (fewer than 1,000 here). */
async function keys(s: TestSwift, bucket: string): Promise<string[]> {
  const listed = await s.client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listed.Contents ?? []).map((o) => o.Key!);
}

/** Runs `wharf lfs move-store` and SIGKILLs it once `copiedLines` objects were reported copied. */
function killedAfter(env: Record<string, string>, copiedLines: number): Promise<{ stderr: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    const [command, argv, extra] = asUserRuns([WHARF_BIN, 'lfs', 'move-store', '--concurrency', '1']);
    const child = spawn(command, argv, { env: { ...process.env, ...extra, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      if ((stderr.match(/: copied$/gm) ?? []).length >= copiedLines) child.kill('SIGKILL');
    });
    child.on('close', (_code, signal) => resolve({ stderr, signal }));
  });
}

function tests(s: TestSwift) {
  t.test('move-store copies 100 objects, is killed mid-way, and a second run finishes the rest; every object verified', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-move-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const lfsDir = path.join(dir, 'lfs');
    const store = createFsLfsStore(lfsDir);
    const contents = new Map<string, Buffer>();
    for (let i = 0; i < 100; i++) {
      const content = randomBytes(20_000 + i * 1000);
      const oid = sha256(content);
      contents.set(oid, content);
      await store.write(oid, content.length, Readable.from([content]));
    }
    const bucket = await s.bucket();
    const env = { ...s.env(bucket), DATA_DIR: path.join(dir, 'data'), LFS_DIR: lfsDir };

    const killed = await killedAfter(env, 10);
    t.equal(killed.signal, 'SIGKILL', 'the first run was killed');
    t.match(killed.stderr, /^moving 100 LFS objects from .* to bucket wharf-/m, 'it said what it moves');
    const before = await keys(s, bucket);
    t.ok(before.length >= 10 && before.length < 100, `interrupted mid-way: ${before.length} of 100 in the bucket`);

    const resumed = await runCli(['lfs', 'move-store'], env);
    t.equal(resumed.code, 0, resumed.stderr);
    const summary = /^100 objects: (\d+) copied, (\d+) already in the bucket, 0 failed/m.exec(resumed.stdout);
    t.ok(summary, resumed.stdout);
    t.equal(Number(summary?.[2]), before.length, 'what the first run copied is skipped');
    t.equal(Number(summary?.[1]), 100 - before.length, 'the rest is copied');
    t.equal((resumed.stderr.match(/^\[ *\d+\/100\] [0-9a-f]{64} \d+ bytes: (copied|already there)$/gm) ?? []).length, 100, 'one progress line an object');

    t.same((await keys(s, bucket)).sort(), [...contents.keys()].map(objectKey).sort(), 'every object is in the bucket, under its key');
    let verified = 0;
    for (const [oid, content] of contents) {
      const got = await s.client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(oid) }));
      const bytes = await buffer(got.Body as Readable);
      if (bytes.equals(content) && sha256(bytes) === oid) verified += 1;
    }
    t.equal(verified, 100, 'every object read back from the bucket has its SHA-256');
    for (const oid of contents.keys()) if ((await store.size(oid)) !== contents.get(oid)!.length) t.fail(`${oid} left the file system store`);

    const again = await runCli(['lfs', 'move-store'], env);
    t.equal(again.code, 0);
    t.match(again.stdout, /^100 objects: 0 copied, 100 already in the bucket, 0 failed/m, 'a third run has nothing left to do');
  });

  t.test('a corrupt file in LFS_DIR is not copied: reported, and the command exits 1', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-move-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const lfsDir = path.join(dir, 'lfs');
    const store = createFsLfsStore(lfsDir);
    const good = randomBytes(3000);
    const bad = randomBytes(3000);
    await store.write(sha256(good), good.length, Readable.from([good]));
    await store.write(sha256(bad), bad.length, Readable.from([bad]));
    const badFile = path.join(lfsDir, sha256(bad).slice(0, 2), sha256(bad).slice(2, 4), sha256(bad));
    const rotten = Buffer.from(bad);
    rotten[7] ^= 1;
    fs.writeFileSync(badFile, rotten);
    const bucket = await s.bucket();
    const moved = await runCli(['lfs', 'move-store'], { ...s.env(bucket), DATA_DIR: path.join(dir, 'data'), LFS_DIR: lfsDir });
    t.equal(moved.code, 1);
    t.match(moved.stdout, /^2 objects: 1 copied, 0 already in the bucket, 1 failed/m);
    t.match(moved.stderr, new RegExp(`${sha256(bad)} 3000 bytes: FAILED: content does not match its SHA-256 oid`));
    t.same(await keys(s, bucket), [objectKey(sha256(good))], 'only the sound object is in the bucket');
    t.ok(fs.existsSync(badFile), 'the source is left as it was');
  });

  t.test('without LFS_STORE=s3, or with a setting missing, it says what to set', async (t) => {
    const fsOnly = await runCli(['lfs', 'move-store'], { DATA_DIR: os.tmpdir(), LFS_STORE: 'fs' });
    t.equal(fsOnly.code, 1);
    t.match(fsOnly.stderr, /set LFS_STORE=s3 and the S3_\* settings/);
    const noBucket = await runCli(['lfs', 'move-store'], { ...s.env(''), DATA_DIR: os.tmpdir() });
    t.equal(noBucket.code, 1);
    t.match(noBucket.stderr, /configuration error: S3_BUCKET: required with LFS_STORE=s3/);
    t.notMatch(noBucket.stderr, /testing/, 'the secret key is not echoed');
  });
}
