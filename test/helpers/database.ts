import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexLib from 'knex';

/** A database of a test's own: a temporary SQLite file, or a Postgres database created for it and dropped after. */
export interface TestDatabase {
  url: string;
  dialect: 'sqlite' | 'postgres';
  drop(): Promise<void>;
}

/** The Postgres server tests run against, when TEST_DATABASE_URL is set. */
export const postgresUrl = process.env.TEST_DATABASE_URL || undefined;

/** Creates a fresh, empty database for one test (Postgres when TEST_DATABASE_URL is set). */
export async function createTestDatabase(dir?: string): Promise<TestDatabase> {
  if (!postgresUrl) {
    const base = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-db-'));
    const file = path.join(base, `wharf-${randomBytes(4).toString('hex')}.sqlite`);
    return {
      url: `sqlite:${file}`,
      dialect: 'sqlite',
      async drop() {
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
      },
    };
  }
  const name = `wharf_t_${randomBytes(6).toString('hex')}`;
  const admin = knexLib({ client: 'pg', connection: postgresUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`CREATE DATABASE ${name}`);
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
