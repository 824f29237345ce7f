import type { Config } from '../config.ts';
import type { LfsStore } from './lfsStore.ts';
import { createFsLfsStore } from './fsStore.ts';
import type { S3StoreOptions } from './s3Store.ts';

// The S3 store and its client (@aws-sdk, some 0.5 s of loading here) are imported only
// when the configuration names a bucket: a node on the filesystem store never loads them.

/** The LFS store the configuration names; the one place that chooses an implementation (the server and the CLI's commands that run workers use it). */
export async function createLfsStore(config: Config): Promise<LfsStore> {
  if (config.lfsStore === 's3' && config.s3) {
    const { createS3LfsStore } = await import('./s3Store.ts');
    return createS3LfsStore(s3StoreOptions(config));
  }
  return createFsLfsStore(config.lfsDir);
}

/** Creates the configured bucket when S3_CREATE_BUCKET asks for it (a start does this before it serves). */
export async function ensureConfiguredBucket(config: Config): Promise<void> {
  if (!config.s3?.createBucket) return;
  const { createS3Client, ensureBucket } = await import('./s3Store.ts');
  await ensureBucket(createS3Client(s3StoreOptions(config)), config.s3.bucket);
}

/** The S3 store's options from the configuration (LFS_STORE=s3). */
export function s3StoreOptions(config: Config): S3StoreOptions {
  const { createBucket: _create, ...s3 } = config.s3!;
  return { ...s3, downloadExpiresSec: Math.floor(config.lfsDownloadExpiresMs / 1000) };
}
