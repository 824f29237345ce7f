import type { Config } from '../config.ts';
import type { LfsStore } from './lfsStore.ts';
import { createFsLfsStore } from './fsStore.ts';
import { createS3LfsStore, type S3StoreOptions } from './s3Store.ts';

/** The LFS store the configuration names; the one place that chooses an implementation (the server and the CLI's commands that run workers use it). */
export function createLfsStore(config: Config): LfsStore {
  if (config.lfsStore === 's3' && config.s3) return createS3LfsStore(s3StoreOptions(config));
  return createFsLfsStore(config.lfsDir);
}

/** The S3 store's options from the configuration (LFS_STORE=s3). */
export function s3StoreOptions(config: Config): S3StoreOptions {
  const { createBucket: _create, ...s3 } = config.s3!;
  return { ...s3, downloadExpiresSec: Math.floor(config.lfsDownloadExpiresMs / 1000) };
}
