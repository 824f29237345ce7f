import type { Knex } from 'knex';

/**
 * A bigint column or an aggregate (a count, a max) as a driver may give it: SQLite gives
 * numbers; node-postgres gives int8 as a string unless told otherwise (connect.ts's parser
 * makes it a number) and NUMERIC always as a string. Rows type such columns so and read them
 * through Number(). (An integer column is a number from both.)
 */
export type DbInt = number | string;

/** A boolean column: true or false from Postgres, 1 or 0 from SQLite; read through Boolean() or `!!`. */
export type DbBool = boolean | number;

/** The row of a `count({ n: '*' })`. */
interface CountRow {
  n: DbInt;
}

/** How many rows a query matches (its `count(*)`, without grouping). */
export async function countRows(query: Knex.QueryBuilder): Promise<number> {
  const [row] = (await query.count({ n: '*' })) as CountRow[];
  return Number(row?.n ?? 0);
}

/** How many rows a query matches for each value of `column` (`GROUP BY column`), by that value as text. */
export async function countBy(query: Knex.QueryBuilder, column: string): Promise<Map<string, number>> {
  const rows = (await query.groupBy(column).select(column).count({ n: '*' })) as (CountRow & Record<string, unknown>)[];
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(String(row[column]), Number(row.n));
  return counts;
}
