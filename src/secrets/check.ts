import type { Knex } from 'knex';
import { isSealed, keyId, open, seal, sealedKeyId, SecretOpenError } from './cipher.ts';
import { KEY_CHECK, LEGACY_PREFIX, SEALED_COLUMNS } from './columns.ts';

/** The key id the database's check value was sealed with, or null before the first start. */
export async function storedKeyId(db: Knex): Promise<string | null> {
  const row = await db('settings').where('name', KEY_CHECK.name).first('value');
  return row ? (sealedKeyId(row.value) ?? 'unknown') : null;
}

/**
 * Checks a key against the database: the check value must open with it and no stored
 * secret may name another key. On a database without a check value the key's is written.
 * Returns null when the key fits, else the id of the key the database was sealed with.
 */
export async function keyMismatch(db: Knex, key: Buffer): Promise<string | null> {
  // Nodes starting together race to write the first check value; the first one wins.
  await db('settings')
    .insert({ name: KEY_CHECK.name, value: seal(key, KEY_CHECK.purpose, KEY_CHECK.text) })
    .onConflict('name')
    .ignore();
  const row = await db('settings').where('name', KEY_CHECK.name).first('value');
  try {
    if (open(key, KEY_CHECK.purpose, row.value) !== KEY_CHECK.text) return sealedKeyId(row.value) ?? 'unknown';
  } catch (err) {
    if (err instanceof SecretOpenError) return sealedKeyId(row.value) ?? 'unknown';
    throw err;
  }
  const own = keyId(key);
  for (const { table, column } of SEALED_COLUMNS) {
    const other = await db(table).where(column, 'like', 'v1:%').whereNot(column, 'like', `v1:${own}:%`).first(column);
    if (other) return sealedKeyId(other[column]) ?? 'unknown';
  }
  return null;
}

/** Seals the values stored before sealing existed (marked by the migration); returns how many. */
export async function sealLegacyValues(db: Knex, key: Buffer): Promise<number> {
  return db.transaction(async (trx) => {
    let count = 0;
    for (const { table, column, purpose } of SEALED_COLUMNS) {
      const rows = await trx(table).where(column, 'like', `${LEGACY_PREFIX}%`).select('id', column);
      for (const row of rows) {
        const stored: string = row[column];
        if (isSealed(stored)) continue;
        await trx(table)
          .where('id', row.id)
          .update({ [column]: seal(key, purpose, stored.slice(LEGACY_PREFIX.length)) });
        count++;
      }
    }
    return count;
  });
}
