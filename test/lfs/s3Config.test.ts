import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.ts';

const S3 = {
  LFS_STORE: 's3',
  S3_ENDPOINT: 'http://127.0.0.1:6203',
  S3_BUCKET: 'wharf-lfs',
  S3_ACCESS_KEY_ID: 'test:tester',
  S3_SECRET_ACCESS_KEY: 'do-not-print-me',
};

t.test('the file system store is the default; LFS_STORE=s3 reads the S3_* settings', async (t) => {
  const plain = loadConfig({});
  t.equal(plain.lfsStore, 'fs');
  t.equal(plain.s3, undefined);
  t.equal(plain.lfsDownloadExpiresMs, 15 * 60_000, 'downloads signed for 15 minutes by default');
  const s3 = loadConfig(S3);
  t.same(s3.s3, {
    endpoint: 'http://127.0.0.1:6203',
    bucket: 'wharf-lfs',
    region: 'us-east-1',
    accessKeyId: 'test:tester',
    secretAccessKey: 'do-not-print-me',
    forcePathStyle: true,
    createBucket: false,
  });
  t.equal(loadConfig({ ...S3, LFS_DOWNLOAD_EXPIRES: '5m', S3_FORCE_PATH_STYLE: 'false', S3_REGION: 'eu-west-1' }).lfsDownloadExpiresMs, 300_000);
  t.equal(loadConfig({ ...S3, S3_FORCE_PATH_STYLE: 'false' }).s3!.forcePathStyle, false);
});

t.test('a missing or bad setting stops start-up naming the variable, never echoing a key', async (t) => {
  for (const name of ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
    const env: Record<string, string> = { ...S3 };
    delete env[name];
    t.throws(() => loadConfig(env), new ConfigError(name, 'required with LFS_STORE=s3'), `${name} missing`);
  }
  const cases: [Record<string, string>, string][] = [
    [{ LFS_STORE: 'minio' }, 'LFS_STORE'],
    [{ ...S3, S3_ENDPOINT: 'ftp://x' }, 'S3_ENDPOINT'],
    [{ ...S3, S3_ENDPOINT: 'http://key:secret@127.0.0.1' }, 'S3_ENDPOINT'],
    [{ ...S3, S3_BUCKET: 'Not_A_Bucket' }, 'S3_BUCKET'],
    [{ ...S3, S3_FORCE_PATH_STYLE: 'maybe' }, 'S3_FORCE_PATH_STYLE'],
    [{ ...S3, LFS_DOWNLOAD_EXPIRES: '8d' }, 'LFS_DOWNLOAD_EXPIRES'],
  ];
  for (const [env, name] of cases) {
    const err = (() => {
      try {
        loadConfig(env);
      } catch (e) {
        return e as ConfigError;
      }
    })();
    t.equal(err?.variable, name, `${name}: ${err?.message}`);
    t.notMatch(err?.message ?? '', /do-not-print-me/, 'the secret key is not in the message');
  }
});
