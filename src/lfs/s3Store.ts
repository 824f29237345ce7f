import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CreateBucketCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { contentCheck } from './integrity.ts';
import { LfsIntegrityError, OID_PATTERN, type LfsStore } from './lfsStore.ts';
import type { S3Settings } from '../config.ts';

/** Where and how to reach the bucket (LFS_STORE=s3; see docs/configuration.md). */
export interface S3StoreOptions extends Omit<S3Settings, 'createBucket'> {
  /** Seconds a presigned download address stays valid (LFS_DOWNLOAD_EXPIRES). */
  downloadExpiresSec: number;
  /** Bytes per part of a multipart upload; an object up to this size is sent in one PUT. 8 MiB by default (S3's least is 5 MiB). */
  partSize?: number;
}

/** Parts in flight per upload: with the part being filled, an upload holds at most (PARTS_IN_FLIGHT + 1) × part size in memory. */
const PARTS_IN_FLIGHT = 2;
/** S3 allows 10,000 parts; a little room is kept so a big object's parts grow instead. */
const MAX_PARTS = 9_000;
/** A health check waits no longer than this for the bucket. */
const HEALTH_TIMEOUT_MS = 2000;

/** The key of an object in the bucket: `lfs/ab/cd/<oid>`, as the file system store lays it out. */
export function objectKey(oid: string): string {
  if (!OID_PATTERN.test(oid)) throw new Error('invalid oid');
  return `lfs/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
}

/** The S3 client for a bucket: path-style addressing and no checksums the S3 API of Swift and older servers do not know. */
export function createS3Client(options: S3StoreOptions): S3Client {
  return new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    // The SDK's default CRC32 checksums (and the aws-chunked uploads they bring) are refused
    // by S3-compatible servers that predate them; Wharf checks the SHA-256 itself.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');
}

/** Creates the bucket unless it exists (S3_CREATE_BUCKET; operators usually create it themselves, with its policy). */
export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  }
}

/**
 * The LFS store in an S3-compatible bucket (AWS S3, MinIO, Swift's s3api), one object per
 * oid at `lfs/ab/cd/<oid>`. Uploads stream through the node, checked as they pass; downloads
 * are handed to clients as presigned GET addresses.
 */
export function createS3LfsStore(options: S3StoreOptions, client: S3Client = createS3Client(options)): LfsStore {
  const Bucket = options.bucket;
  const basePartSize = options.partSize ?? 8 * 1024 * 1024;

  return {
    async size(oid) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(oid) }));
        return head.ContentLength ?? 0;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async open(oid) {
      const got = await client.send(new GetObjectCommand({ Bucket, Key: objectKey(oid) }));
      return got.Body as Readable;
    },

    /*
     * Written straight to the oid's key, never to a temporary key copied after the check
     * (a copy costs the object's size again, and S3 copies an object above 5 GB only part by
     * part). The check is at the end of the stream the upload reads (contentCheck's
     * transform fails its flush), and the object becomes visible only after that end: an
     * object up to the part size is sent in one PUT once the whole stream was read, a larger
     * one is a multipart upload completed only after its last part was read. On a mismatch,
     * an aborted source or a failed part, the multipart upload is aborted instead, so nothing
     * appears under the key (an object already there stays as it was). A node killed
     * mid-upload leaves an unfinished multipart upload, invisible and never completed: a
     * bucket lifecycle rule (AbortIncompleteMultipartUpload) frees its parts.
     */
    async write(oid, size, source) {
      const Key = objectKey(oid);
      const check = contentCheck(oid, size);
      const body = new PassThrough();
      // The source's or the check's own failure, when the upload fails because of it.
      let streamError: unknown;
      const piped = pipeline(source, check.transform, body).catch((err: unknown) => {
        streamError ??= err;
      });
      const partSize = Math.max(basePartSize, Math.ceil(size / MAX_PARTS));
      const upload = new Upload({ client, params: { Bucket, Key, Body: body, ContentLength: size }, partSize, queueSize: PARTS_IN_FLIGHT });
      try {
        await upload.done();
      } catch (err) {
        const cause = err instanceof LfsIntegrityError ? err : (streamError ?? err);
        source.destroy();
        body.destroy();
        await piped;
        throw cause;
      }
      await piped;
    },

    async downloadHref(oid) {
      const href = await getSignedUrl(client, new GetObjectCommand({ Bucket, Key: objectKey(oid) }), { expiresIn: options.downloadExpiresSec });
      return { href, expiresIn: options.downloadExpiresSec };
    },

    async health() {
      try {
        await client.send(new HeadBucketCommand({ Bucket }), { abortSignal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
        return { kind: 's3', status: 'ok' };
      } catch {
        return { kind: 's3', status: 'unreachable' };
      }
    },
  };
}
