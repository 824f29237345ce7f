import type { Services } from '../../services.ts';
import { readBlob, type GitObject } from '../../git/tree.ts';
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

/** Reads a blob for a page: never more than SHOWN_LIMIT bytes (its size is known before it is read). */
export async function blobContent(dir: string, object: GitObject): Promise<BlobContent> {
  const size = object.size;
  if (size > SHOWN_LIMIT) return { kind: 'large', size };
  const bytes = await readBlob(dir, object.id);
  if (looksBinary(bytes)) return { kind: 'binary', size };
  const text = bytes.toString('utf8');
  const pointer = size < POINTER_LIMIT ? parseLfsPointer(text) : null;
  if (pointer) return { kind: 'lfs', size, pointer };
  return { kind: 'text', size, text };
}

/** The LFS pointer a blob holds, or null; reads only blobs small enough to be one. */
export async function lfsPointerOf(dir: string, object: GitObject): Promise<LfsPointer | null> {
  if (object.size >= POINTER_LIMIT) return null;
  return parseLfsPointer((await readBlob(dir, object.id)).toString('utf8'));
}

/**
 * The stored size of an LFS object this repository may serve, or null: an object linked
 * only to another repository is never served here, even when the store holds its bytes.
 */
export async function servableLfsSize(services: Services, repositoryId: number, oid: string): Promise<number | null> {
  if (!(await repositoryHasObject(services.db, repositoryId, oid))) return null;
  return services.lfs.size(oid);
}
