import type { Knex } from 'knex';
import { connectionPool, type Db } from '../../db/connect.ts';

/** One statement of a SqliteRunner call: 'all' returns the rows, 'run' the number of rows changed. */
export interface SqlStep {
  sql: string;
  params: unknown[] | Record<string, unknown>;
  mode: 'all' | 'run';
}

/** Runs statements in order (as one IMMEDIATE transaction if asked), on the main connection or on the SQLite thread. */
export type SqliteRunner = (steps: SqlStep[], transaction: boolean) => Promise<unknown[]>;

/** The parts of a better-sqlite3 connection used here. */
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  transaction<F extends (...args: never[]) => unknown>(fn: F): F & { immediate: F };
}

interface SqliteStatement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

const statements = new WeakMap<object, Map<string, SqliteStatement>>();

/** The statement for `sql`, prepared once per connection (Knex would prepare it on every call). */
function prepared(conn: SqliteConnection, sql: string): SqliteStatement {
  let byText = statements.get(conn);
  if (!byText) statements.set(conn, (byText = new Map()));
  let stmt = byText.get(sql);
  if (!stmt) {
    if (byText.size > 500) byText.clear();
    byText.set(sql, (stmt = conn.prepare(sql)));
  }
  return stmt;
}

function runSteps(conn: SqliteConnection, steps: SqlStep[]): unknown[] {
  return steps.map(({ sql, params, mode }) => {
    const stmt = prepared(conn, sql);
    const args = Array.isArray(params) ? params : [params];
    return mode === 'all' ? stmt.all(...args) : stmt.run(...args).changes;
  });
}

/**
 * A runner on Knex's one SQLite connection (for a database the SQLite thread cannot open,
 * `:memory:`): no Knex query or transaction interleaves with it, and the statements run
 * synchronously (better-sqlite3).
 */
export function mainConnectionRunner(db: Db): SqliteRunner {
  return async (steps, transaction) => {
    const client = connectionPool<SqliteConnection>(db);
    const conn = await client.acquireConnection();
    try {
      return transaction ? conn.transaction(runSteps).immediate(conn, steps) : runSteps(conn, steps);
    } finally {
      await client.releaseConnection(conn);
    }
  };
}

/** The file of a SQLite database, or null when it has none (`:memory:`). */
export function sqliteFile(db: Db): string | null {
  const filename = (db.client.config.connection as Knex.Sqlite3ConnectionConfig | undefined)?.filename;
  return filename && filename !== ':memory:' ? filename : null;
}
