import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexLib, { type Knex } from 'knex';
import pg from 'pg';

// Counts, ids and epoch-millisecond times are bigints in Postgres; all of them fit a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Db = Knex;

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

/** True when the database is Postgres (the other dialect is SQLite). */
export function isPostgres(db: Knex): boolean {
  return db.client.config.client === 'pg';
}

/**
 * The settings every SQLite connection runs with (the main one here, the dispatcher's thread,
 * delivery/store/sqliteThread.ts): write-ahead logging, and `synchronous = FULL`, so a
 * commit is on disk before it returns. With NORMAL the log is written to disk only at a
 * checkpoint: a power cut could take transactions whose answers had gone out (a push
 * record after `git push` returned, a delivery's attempt), as Postgres' default
 * `synchronous_commit = on` never does. The busy timeout is set by each connection.
 */
export const SQLITE_PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON'];

/** Knex settings for a DATABASE_URL (`sqlite:<path>` or `postgres://…`). */
export function knexConfig(databaseUrl: string): Knex.Config {
  const migrations = { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations' };
  if (databaseUrl.startsWith('sqlite:')) {
    const filename = databaseUrl.slice('sqlite:'.length);
    if (filename !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true });
    return {
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      migrations,
      // One connection: SQLite serializes writers anyway, and one connection makes
      // every claim statement atomic without busy retries.
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: { pragma(source: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
          for (const pragma of SQLITE_PRAGMAS) conn.pragma(pragma);
          conn.pragma('busy_timeout = 5000');
          done(null, conn);
        },
      },
    };
  }
  return { client: 'pg', connection: databaseUrl, migrations, pool: { min: 0, max: 10 } };
}

/**
 * Knex's pool of driver connections (node-postgres clients, or the one better-sqlite3
 * database), for the few statements run on a connection itself. Knex types these methods
 * `any`; `C` is the caller's view of the driver's connection.
 */
export interface ConnectionPool<C> {
  acquireConnection(): Promise<C>;
  releaseConnection(conn: C): Promise<unknown>;
}

/** The connection pool of a database's Knex client. */
export function connectionPool<C>(db: Knex): ConnectionPool<C> {
  return db.client as ConnectionPool<C>;
}

/** The parts of Knex's client and transactions immediateTransactions changes (Knex internals, untyped). */
interface TransactionFactory {
  transaction(...args: unknown[]): KnexTransactionInternals;
}

interface KnexTransactionInternals {
  /** Sends the statement that begins the transaction on its connection. */
  begin(conn: unknown): unknown;
  /** Sends one statement on the transaction's connection. */
  query(conn: unknown, sql: string): unknown;
}

/** Opens the database of a DATABASE_URL. */
export function connect(databaseUrl: string): Knex {
  const db = knexLib(knexConfig(databaseUrl));
  if (!isPostgres(db)) immediateTransactions(db);
  return db;
}

/**
 * Makes Knex's SQLite transactions take the write lock when they begin (BEGIN IMMEDIATE)
 * instead of at their first write. Other connections write to the same file (the
 * dispatcher's SQLite thread, the CLI, other processes): a deferred transaction that read
 * first and wants to write after one of them committed fails at once with
 * SQLITE_BUSY_SNAPSHOT, while an immediate one waits its turn (busy_timeout).
 */
function immediateTransactions(db: Knex): void {
  const client = db.client as TransactionFactory;
  const transaction = client.transaction.bind(client);
  client.transaction = (...args: unknown[]) => {
    const trx = transaction(...args);
    trx.begin = (conn: unknown) => trx.query(conn, 'BEGIN IMMEDIATE;');
    return trx;
  };
}

/** The file of a `sqlite:` DATABASE_URL, resolved; null for Postgres and `sqlite::memory:`. */
export function sqliteFile(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:')) return null;
  const filename = databaseUrl.slice('sqlite:'.length);
  return filename === ':memory:' ? null : path.resolve(filename);
}

/** Whether Wharf's schema was ever set up in this database (a migration ran: its bookkeeping table exists). */
export async function hasSchema(db: Knex): Promise<boolean> {
  return db.schema.hasTable('knex_migrations');
}

/** Brings the schema up to date. */
export async function migrate(db: Knex): Promise<void> {
  await db.migrate.latest();
}
