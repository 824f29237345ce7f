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

/**
 * One multi-row `INSERT … VALUES (…), (…)` per chunk, written out by hand: Knex
 * renders multi-row inserts on SQLite as `SELECT … UNION ALL SELECT …`, which
 * SQLite caps at 500 terms. Both dialects accept this form, `ON CONFLICT` and
 * `RETURNING` alike. Returns the `returning` columns of every written row.
 */
export async function insertValues<R = Record<string, unknown>>(
  trx: Knex.Transaction,
  table: string,
  rows: Record<string, unknown>[],
  options: { returning?: string[]; conflict?: { target: string[]; merge?: string[] } } = {},
): Promise<R[]> {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]);
  const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
  let tail = '';
  if (options.conflict) {
    const { target, merge } = options.conflict;
    tail += ` on conflict (${target.map(q).join(', ')}) `;
    tail += merge?.length ? `do update set ${merge.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}` : 'do nothing';
  }
  if (options.returning) tail += ` returning ${options.returning.map(q).join(', ')}`;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const out: R[] = [];
  for (const chunk of chunksFor(rows, columns.length)) {
    const sql = `insert into ${q(table)} (${columns.map(q).join(', ')}) values ${chunk.map(() => tuple).join(', ')}${tail}`;
    const values = chunk.flatMap((row) => columns.map((c) => row[c] ?? null));
    const result = await trx.raw(sql, values as Knex.RawBinding[]);
    // pg answers { rows }, better-sqlite3 an array of rows.
    if (options.returning) out.push(...((Array.isArray(result) ? result : result.rows) as R[]));
  }
  return out;
}
