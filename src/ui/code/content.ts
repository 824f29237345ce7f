import type { Services } from '../../services.ts';
import { repositoryHasObject } from '../../lfs/links.ts';
import { parseLfsPointer, type LfsPointer } from '../../remote/lfsScan.ts';

/** Files larger than this are not read into a page; the raw link streams them. */
export const SHOWN_LIMIT = 1024 * 1024;

/** git's own test for binary content (buffer_is_binary): a NUL among the first 8000 bytes. */
export const BINARY_PEEK = 8000;

/** The git-lfs spec keeps pointer files under 1024 bytes: a larger blob is never read as one. */
const POINTER_LIMIT = 1024;

/** A blob as a page can show it. */
export type BlobContent =
  | { kind: 'large'; size: number }
  | { kind: 'lfs'; size: number; pointer: LfsPointer }
  | { kind: 'binary'; size: number }
  | { kind: 'text'; size: number; text: string };

/** True when bytes look binary the way git decides it. */
export function looksBinary(head: Buffer): boolean {
  return head.subarray(0, BINARY_PEEK).includes(0);
}

/**
 * A blob as a page shows it, from its size and its content (null when the blob was too
 * large to be read: over SHOWN_LIMIT, it never is).
 */
export function blobContent(size: number, bytes: Buffer | null): BlobContent {
  if (!bytes || size > SHOWN_LIMIT) return { kind: 'large', size };
  if (looksBinary(bytes)) return { kind: 'binary', size };
  const text = bytes.toString('utf8');
  const pointer = size < POINTER_LIMIT ? parseLfsPointer(text) : null;
  if (pointer) return { kind: 'lfs', size, pointer };
  return { kind: 'text', size, text };
}

/** The LFS pointer small content holds, or null (content over the pointer limit never is one). */
export function lfsPointerIn(bytes: Buffer | null): LfsPointer | null {
  if (!bytes || bytes.length >= POINTER_LIMIT) return null;
  return parseLfsPointer(bytes.toString('utf8'));
}

/**
 * The stored size of an LFS object this repository may serve, or null: an object linked
 * only to another repository is never served here, even when the store holds its bytes.
 */
export async function servableLfsSize(services: Services, repositoryId: number, oid: string): Promise<number | null> {
  if (!(await repositoryHasObject(services.db, repositoryId, oid))) return null;
  return services.lfs.size(oid);
}
