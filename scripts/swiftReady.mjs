// Exits 0 when the S3 endpoint of S3_ENDPOINT answers a signed request (ListBuckets) with
// S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY; scripts/swift.sh waits on it.
import { S3Client, ListBucketsCommand } from '@aws-sdk/client-s3';

const client = new S3Client({
  endpoint: process.env.S3_ENDPOINT,
  region: process.env.S3_REGION ?? 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: process.env.S3_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? '' },
  maxAttempts: 1,
});
try {
  await client.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2000) });
  process.exit(0);
} catch {
  process.exit(1);
}
