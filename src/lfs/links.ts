import type { Db } from '../db/connect.ts';

/** Records that a repository holds an object (idempotent). */
export async function linkObject(db: Db, repositoryId: number, oid: string, size: number): Promise<void> {
  const now = Date.now();
  await db('lfs_objects').insert({ oid, size, created_at: now }).onConflict('oid').ignore();
  await db('repository_lfs_objects').insert({ repository_id: repositoryId, oid, created_at: now }).onConflict(['repository_id', 'oid']).ignore();
}

/** True when an object is linked to a repository (whether the store still holds its bytes is the store's to say). */
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
