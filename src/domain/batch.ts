import type { Knex } from 'knex';
import { isPostgres } from '../db/connect.ts';

/**
 * Bound variables one statement may carry. SQLite (as bundled by better-sqlite3)
 * allows 32,766 and Postgres 65,535; staying well under both keeps every chunk legal.
 */
const MAX_VARIABLES = 30_000;

/** Splits rows into chunks small enough that a multi-row statement of `columns` values per row stays under the variable limit. */
export function chunksFor<T>(rows: T[], columns: number): T[][] {
  const size = Math.max(1, Math.floor(MAX_VARIABLES / Math.max(1, columns)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** Id of an inserted row as either dialect returns it. */
export function insertedId(row: unknown): number {
  return typeof row === 'object' && row !== null ? Number((row as { id: number }).id) : Number(row);
}

/**
 * Serializes writers that allocate numbers in one repository. Postgres locks the
 * repository row until the transaction ends; SQLite needs nothing, as Wharf holds
 * one connection and SQLite serializes write transactions anyway.
 */
export async function lockRepository(trx: Knex.Transaction, repositoryId: number): Promise<void> {
  if (isPostgres(trx)) await trx('repositories').where('id', repositoryId).forUpdate().first('id');
}
