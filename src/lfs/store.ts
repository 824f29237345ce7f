import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../db/connect.ts';

/** An LFS object id: the lowercase hex SHA-256 of its content. */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** Raised when streamed content does not match the size or SHA-256 it was announced with. Storage's own: the LFS route shows it as a validation failure, an import as a missing object. */
export class LfsIntegrityError extends Error {}

/** Where an object lives under LFS_DIR: `ab/cd/<oid>`. */
export function objectPath(lfsDir: string, oid: string): string {
  if (!OID_PATTERN.test(oid)) throw new Error('invalid oid');
  return path.join(lfsDir, oid.slice(0, 2), oid.slice(2, 4), oid);
}

/** The stored size of an object, or null when it is not on disk. */
export async function storedSize(lfsDir: string, oid: string): Promise<number | null> {
  try {
    return (await fsp.stat(objectPath(lfsDir, oid))).size;
  } catch {
    return null;
  }
}

/**
 * Streams content into the store, checking size and SHA-256 as it goes. Content is
 * written to a temporary file, fsynced, and renamed into place only when it matches,
 * so a mismatch or an aborted upload stores nothing. Throws LfsIntegrityError on mismatch.
 */
export async function writeObject(lfsDir: string, oid: string, size: number, source: Readable): Promise<void> {
  const final = objectPath(lfsDir, oid);
  const tmpDir = path.join(lfsDir, 'tmp');
  await fsp.mkdir(tmpDir, { recursive: true });
  const tmp = path.join(tmpDir, `${oid}.${randomBytes(6).toString('hex')}`);
  const hash = createHash('sha256');
  let received = 0;
  const check = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > size) return done(new LfsIntegrityError(`more than the announced ${size} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    const out = fs.createWriteStream(tmp, { flags: 'wx' });
    await pipeline(source, check, out);
    if (received !== size) throw new LfsIntegrityError(`received ${received} bytes, announced ${size}`);
    if (hash.digest('hex') !== oid) throw new LfsIntegrityError('content does not match its SHA-256 oid');
    const fd = await fsp.open(tmp, 'r');
    await fd.sync();
    await fd.close();
    await fsp.mkdir(path.dirname(final), { recursive: true });
    await fsp.rename(tmp, final);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/** Records that a repository holds an object (idempotent). */
export async function linkObject(db: Db, repositoryId: number, oid: string, size: number): Promise<void> {
  const now = Date.now();
  await db('lfs_objects').insert({ oid, size, created_at: now }).onConflict('oid').ignore();
  await db('repository_lfs_objects').insert({ repository_id: repositoryId, oid, created_at: now }).onConflict(['repository_id', 'oid']).ignore();
}

/** True when a repository holds an object (linked and on disk). */
export async function repositoryHasObject(db: Db, repositoryId: number, oid: string): Promise<boolean> {
  const row = await db('repository_lfs_objects').where({ repository_id: repositoryId, oid }).first('oid');
  return Boolean(row);
}

/** Oids looked up in one statement by linkedObjects. */
const LOOKUP_CHUNK = 500;

/** Which of `oids` are linked to the repository, looked up LOOKUP_CHUNK to a statement. */
export async function linkedObjects(db: Db, repositoryId: number, oids: string[]): Promise<Set<string>> {
  const linked = new Set<string>();
  for (let i = 0; i < oids.length; i += LOOKUP_CHUNK) {
    const rows = await db('repository_lfs_objects')
      .where('repository_id', repositoryId)
      .whereIn('oid', oids.slice(i, i + LOOKUP_CHUNK))
      .select('oid');
    for (const r of rows as { oid: string }[]) linked.add(r.oid);
  }
  return linked;
}
