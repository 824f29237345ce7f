import type { Db } from '../db/connect.ts';

/** The parts of a better-sqlite3 connection the dispatcher's hot statements use. */
export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  transaction<T>(fn: () => T): () => T;
}

/** A prepared better-sqlite3 statement. */
export interface SqliteStatement {
  all(...params: unknown[]): any[];
  run(...params: unknown[]): { changes: number };
}

const statements = new WeakMap<object, Map<string, SqliteStatement>>();

/**
 * Runs `fn` on the one SQLite connection, taken from Knex's pool: no Knex query or
 * transaction can interleave with it, and `fn` is synchronous (better-sqlite3), so what
 * it runs inside `conn.transaction()` is one transaction.
 */
export async function onSqlite<T>(db: Db, fn: (conn: SqliteConnection) => T): Promise<T> {
  const client = db.client as any;
  const conn = await client.acquireConnection();
  try {
    return fn(conn);
  } finally {
    await client.releaseConnection(conn);
  }
}

/** The statement for `sql`, prepared once per connection (Knex would prepare it on every call). */
export function prepared(conn: SqliteConnection, sql: string): SqliteStatement {
  let byText = statements.get(conn);
  if (!byText) statements.set(conn, (byText = new Map()));
  let stmt = byText.get(sql);
  if (!stmt) {
    if (byText.size > 500) byText.clear();
    byText.set(sql, (stmt = conn.prepare(sql)));
  }
  return stmt;
}
