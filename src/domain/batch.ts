import type { Knex } from 'knex';
import { connectionPool, isPostgres } from '../db/connect.ts';
import { rawRows } from '../db/results.ts';

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

/**
 * Serializes writers that allocate numbers in one repository. Postgres locks the
 * repository row until the transaction ends; SQLite needs nothing, as Wharf holds
 * one connection and SQLite serializes write transactions anyway.
 */
export async function lockRepository(trx: Knex.Transaction, repositoryId: number): Promise<void> {
  if (isPostgres(trx)) await trx('repositories').where('id', repositoryId).forUpdate().first('id');
}

/** The part of a node-postgres connection insertValues uses. */
interface PgConnection {
  query(config: { text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * One multi-row `INSERT … VALUES (…), (…)` per chunk, written out by hand: Knex
 * renders multi-row inserts on SQLite as `SELECT … UNION ALL SELECT …`, which
 * SQLite caps at 500 terms. Both dialects accept this form, `ON CONFLICT` and
 * `RETURNING` alike. Returns the `returning` columns of every written row.
 *
 * On Postgres the statement is written with `$n` placeholders and sent on the
 * transaction's own connection: through `trx.raw`, Knex would scan its tens of
 * thousands of `?` twice with regular expressions to number them, a fifth of a bulk
 * import's time. Values are strings, numbers or null, which both drivers take as they are.
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
  const postgres = isPostgres(trx);
  const head = `insert into ${q(table)} (${columns.map(q).join(', ')}) values `;
  const out: R[] = [];
  for (const chunk of chunksFor(rows, columns.length)) {
    const values = chunk.flatMap((row) => columns.map((c) => row[c] ?? null));
    if (postgres) {
      const tuples = chunk.map((_, r) => `(${columns.map((_c, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
      const conn = await connectionPool<PgConnection>(trx).acquireConnection();
      const result = await conn.query({ text: head + tuples.join(', ') + tail, values });
      if (options.returning) out.push(...rawRows<R>(result));
      continue;
    }
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    const result = await trx.raw(head + chunk.map(() => tuple).join(', ') + tail, values as Knex.RawBinding[]);
    if (options.returning) out.push(...rawRows<R>(result));
  }
  return out;
}
