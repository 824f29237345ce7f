import fs from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { loadConfig, type Config } from '../config.ts';
import { connect, hasSchema, migrate, sqliteFile, type Db } from '../db/connect.ts';
import { isValidName, NAME_RULE } from '../domain/names.ts';

/** Exit codes of every wharf command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Raised by a command for a failure the user should read in one line (exit 1): the CLI's own refusals (its arguments, its lookups); the domain's refusals are WharfErrors, printed by main(). */
export class CliError extends Error {}

/** Wraps a command's action so its exit code reaches main(). */
export type RunWrapper = (action: () => Promise<number | void>) => () => Promise<void>;

/**
 * Opens the server's database for a command that works on it (every command but `serve`
 * and `migrate`) and brings its schema up to date. A command run from another directory
 * than the server's would otherwise make a new empty database there and report success
 * for changes the server never sees, so it refuses instead: for SQLite when the file does
 * not exist (checked before opening it, which would create it), for Postgres when no
 * migration ever ran there (no `knex_migrations` table). `wharf migrate` or `wharf serve`
 * sets up a new database on purpose.
 */
export async function openServerDb(config: Config): Promise<Db> {
  const file = sqliteFile(config.databaseUrl);
  if (file !== null && !fs.existsSync(file))
    throw new CliError(
      `no Wharf database at ${file}: run this in the server's directory, or set DATA_DIR (or DATABASE_URL) to the server's; wharf migrate creates a new one`,
    );
  const db = connect(config.databaseUrl);
  try {
    if (!(await hasSchema(db)))
      throw new CliError(
        `the database of ${file === null ? 'DATABASE_URL' : file} holds no Wharf schema: set DATABASE_URL (or DATA_DIR) to the server's; wharf migrate sets up a new one`,
      );
    await migrate(db);
    return db;
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/** Runs `work` on the server's database, closed afterwards. */
export async function withDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const db = await openServerDb(loadConfig());
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

/** A login, organization or repository name argument; anything else is a usage error. */
export function nameArg(value: string): string {
  if (!isValidName(value)) throw new InvalidArgumentError(`a name ${NAME_RULE}`);
  return value;
}
