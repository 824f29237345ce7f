import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import knexLib from 'knex';
import { connect, migrate } from '../../src/db/connect.ts';

/** A database of a test's own: a temporary SQLite file, or a Postgres database created for it and dropped after. */
export interface TestDatabase {
  url: string;
  dialect: 'sqlite' | 'postgres';
  drop(): Promise<void>;
}

/** The Postgres server tests run against, when TEST_DATABASE_URL is set. */
export const postgresUrl = process.env.TEST_DATABASE_URL || undefined;

/**
 * Creates a fresh database for one test (Postgres when TEST_DATABASE_URL is set): empty, or
 * with `migrated` a copy of a database the migrations have already run on (see
 * migratedTemplate), where a start's own migrate finds nothing to do.
 */
export async function createTestDatabase(dir?: string, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (!postgresUrl) {
    const base = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-db-'));
    const file = path.join(base, `wharf-${randomBytes(4).toString('hex')}.sqlite`);
    if (options.migrated) fs.copyFileSync(await sqliteTemplate(), file);
    return {
      url: `sqlite:${file}`,
      dialect: 'sqlite',
      async drop() {
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
      },
    };
  }
  const name = `wharf_t_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? await postgresTemplate() : null;
  const admin = knexLib({ client: 'pg', connection: postgresUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dialect: 'postgres',
    async drop() {
      const dropper = knexLib({ client: 'pg', connection: postgresUrl, pool: { min: 0, max: 1 } });
      try {
        await dropper.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.destroy();
      }
    },
  };
}

// A migrated template: the suite's tests start hundreds of servers, and each migrated its
// own new database (26 migrations: 1.3-3 s on Postgres and 0.15-0.7 s on SQLite on this
// two-core machine, while a copy of a migrated database takes a tenth of that). The
// template is made once per set of migrations, by the first test process that needs it,
// and named after a hash of the migration files, so a changed migration makes a new one.
// Tests of migrating itself (and of a first start on an empty database) keep asking for an
// empty database.

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

/** A hash of the migration files' names and contents: the template's name. */
function migrationsKey(): string {
  const hash = createHash('sha256');
  for (const name of fs.readdirSync(MIGRATIONS_DIR).sort())
    hash
      .update(name)
      .update('\0')
      .update(fs.readFileSync(path.join(MIGRATIONS_DIR, name)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Runs the migrations on a database, then closes it. */
async function migrateOnce(url: string): Promise<void> {
  const db = connect(url);
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}

let sqliteMade: Promise<string> | undefined;

/** The migrated SQLite template file under the temporary directory: written whole under another name, then renamed. */
function sqliteTemplate(): Promise<string> {
  sqliteMade ??= (async () => {
    const file = path.join(os.tmpdir(), `wharf-test-schema-${migrationsKey()}.sqlite`);
    if (fs.existsSync(file)) return file;
    const building = `${file}.${randomBytes(4).toString('hex')}`;
    await migrateOnce(`sqlite:${building}`);
    // Closed, its write-ahead log is folded in; a copy then needs the one file.
    for (const suffix of ['-wal', '-shm']) if (fs.existsSync(building + suffix)) throw new Error(`the template ${building} was left with its ${suffix} file`);
    fs.renameSync(building, file);
    return file;
  })();
  return sqliteMade;
}

let postgresMade: Promise<string> | undefined;

/**
 * The migrated Postgres template database, made under an advisory lock (test files run
 * side by side) as another database renamed once migrated, so nobody copies half of one.
 * Templates of other migrations are dropped then.
 */
function postgresTemplate(): Promise<string> {
  postgresMade ??= (async () => {
    const name = `wharf_schema_${migrationsKey()}`;
    const admin = knexLib({ client: 'pg', connection: postgresUrl, pool: { min: 1, max: 1 } });
    try {
      await admin.raw(`SELECT pg_advisory_lock(hashtext('wharf test schema template'))`);
      const found = await admin('pg_database').where('datname', name).first();
      if (!found) {
        // One a process stopped half-way through leaves behind.
        for (const left of await admin('pg_database').where('datname', 'like', 'wharf\\_building\\_%').pluck('datname'))
          await admin.raw(`DROP DATABASE IF EXISTS ${left} WITH (FORCE)`);
        const building = `wharf_building_${randomBytes(6).toString('hex')}`;
        await admin.raw(`CREATE DATABASE ${building}`);
        const url = new URL(postgresUrl!);
        url.pathname = `/${building}`;
        await migrateOnce(url.toString());
        await admin.raw(`ALTER DATABASE ${building} RENAME TO ${name}`);
        const stale = await admin('pg_database').where('datname', 'like', 'wharf\\_schema\\_%').whereNot('datname', name).pluck('datname');
        for (const old of stale) await admin.raw(`DROP DATABASE IF EXISTS ${old} WITH (FORCE)`);
      }
      await admin.raw(`SELECT pg_advisory_unlock(hashtext('wharf test schema template'))`);
    } finally {
      await admin.destroy();
    }
    return name;
  })();
  return postgresMade;
}
