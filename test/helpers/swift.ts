import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client, type S3StoreOptions } from '../../src/lfs/s3Store.ts';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'swift.sh');

/** A Swift with its S3 API, started by scripts/swift.sh for one test file. */
export interface TestSwift {
  endpoint: string;
  client: S3Client;
  /** The store options for a bucket of this Swift. */
  options(bucket: string): S3StoreOptions;
  /** The environment that points Wharf's LFS_STORE=s3 at a bucket of this Swift. */
  env(bucket: string): Record<string, string>;
  /** Creates a bucket with a fresh name and returns the name. */
  bucket(): Promise<string>;
}

/** The part of a tap test the helper uses (a bench gives its own). */
export interface TestLike {
  plan(n: number, comment?: string): void;
  teardown(fn: () => unknown): void;
}

/** Starts a Swift into a fresh directory, stopped when the test file ends (or dies); returns the directory. */
async function startOwnSwift(t: TestLike): Promise<string> {
  const dir = path.join(os.tmpdir(), `wharf-swift-${randomBytes(6).toString('hex')}`);
  const stop = () => spawnSync(SCRIPT, ['stop', dir]);
  process.once('exit', stop); // a test file that dies still stops its Swift
  t.teardown(() => {
    process.removeListener('exit', stop);
    stop();
  });
  // Free ports of its own, so test files (and a bench) can each run one side by side.
  await new Promise<void>((resolve, reject) =>
    execFile(SCRIPT, ['start', dir], { env: { ...process.env, SWIFT_PORT_BASE: 'auto' } }, (err, _stdout, stderr) =>
      err ? reject(new Error(`scripts/swift.sh start failed: ${stderr}`)) : resolve(),
    ),
  );
  return dir;
}

/**
 * The Swift of the test file: the one the suite's runner started for every file (scripts/test.js
 * names its directory in WHARF_TEST_SWIFT), or else one started for this file and stopped when
 * it ends. When Swift is not installed, plans no test and says why, so `npm test` without it
 * skips the file. Every test makes buckets of its own, so files share one Swift safely.
 */
export async function startSwift(t: TestLike): Promise<TestSwift | null> {
  const shared = process.env.WHARF_TEST_SWIFT;
  if (!shared && spawnSync(SCRIPT, ['installed']).status !== 0) {
    t.plan(0, 'S3 tests skipped: Swift is not installed (run scripts/swift.sh install)');
    return null;
  }
  const dir = shared || (await startOwnSwift(t));
  const vars = Object.fromEntries([...fs.readFileSync(path.join(dir, 'env'), 'utf8').matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1], m[2]])) as Record<
    string,
    string
  >;
  const options = (bucket: string): S3StoreOptions => ({
    endpoint: vars.S3_ENDPOINT,
    bucket,
    region: vars.S3_REGION,
    accessKeyId: vars.S3_ACCESS_KEY_ID,
    secretAccessKey: vars.S3_SECRET_ACCESS_KEY,
    forcePathStyle: true,
    downloadExpiresSec: 900,
  });
  const client = createS3Client(options('unused'));
  t.teardown(() => client.destroy());
  return {
    endpoint: vars.S3_ENDPOINT,
    client,
    options,
    env: (bucket) => ({
      LFS_STORE: 's3',
      S3_ENDPOINT: vars.S3_ENDPOINT,
      S3_BUCKET: bucket,
      S3_REGION: vars.S3_REGION,
      S3_ACCESS_KEY_ID: vars.S3_ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: vars.S3_SECRET_ACCESS_KEY,
    }),
    async bucket() {
      const name = `wharf-${randomBytes(5).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
  };
}
