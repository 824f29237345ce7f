import type { Readable } from 'node:stream';

/** An LFS object id: the lowercase hex SHA-256 of its content. */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** Raised when streamed content does not match the size or SHA-256 it was announced with. Storage's own: the LFS route shows it as a validation failure, an import as a missing object. */
export class LfsIntegrityError extends Error {}

/** What a client does with an object through a transfer address: git-lfs's batch operations. */
export type LfsOperation = 'download' | 'upload';

/** A download address a store hands out itself: where a client fetches an object's bytes, the headers it must send there and for how long it works. */
export interface LfsDirectAction {
  href: string;
  header?: Record<string, string>;
  /** Seconds the address stays valid (git-lfs's `expires_in`). */
  expiresIn?: number;
}

/** Which kind of store holds the objects, and whether it answers: what /api/v1/health reports. */
export interface LfsStoreHealth {
  kind: 'fs' | 's3';
  status: 'ok' | 'unreachable';
}

/**
 * Where LFS objects' bytes are kept, by oid. Which repository holds which object is
 * recorded in the database (`links.ts`), not here: a store knows content, not access.
 */
export interface LfsStore {
  /** The stored size of an object, or null when the store does not hold it. */
  size(oid: string): Promise<number | null>;
  /** The whole content of a stored object, streamed. */
  open(oid: string): Promise<Readable>;
  /**
   * Streams content in, checking its size and SHA-256 as it goes; on a mismatch or an
   * aborted source nothing is stored and the promise rejects (LfsIntegrityError on a mismatch).
   */
  write(oid: string, size: number, source: Readable): Promise<void>;
  /**
   * A store that can give bytes without Wharf in between (object storage) answers with its
   * own download address (a presigned GET), and the batch answer sends clients there;
   * without it, clients download through Wharf's own route. The caller decides who may
   * have the address: a store signs whatever it is asked. Uploads always go through Wharf,
   * which checks the bytes against the oid as they pass (a signed upload address is not
   * bound to the content).
   */
  downloadHref?(oid: string): Promise<LfsDirectAction>;
  /** The store's kind and whether it answers now (quickly: health checks call it). */
  health(): Promise<LfsStoreHealth>;
}
