import type { Knex } from 'knex';
import { isSealed, open, seal } from './cipher.ts';
import { KEY_CHECK, LEGACY_PREFIX, SEALED_COLUMNS } from './columns.ts';

/** How many stored values a rotation re-sealed, by `table.column`. */
export type RotationCounts = Record<string, number>;

/**
 * Re-seals every stored secret and the key check value with a new key, in one
 * transaction: the database holds values of the old key or of the new one, never a mix.
 * Every value must open with the old key (a value that does not aborts the rotation).
 */
export async function resealAll(db: Knex, oldKey: Buffer, newKey: Buffer): Promise<RotationCounts> {
  return db.transaction(async (trx) => {
    const counts: RotationCounts = {};
    for (const { table, column, purpose } of SEALED_COLUMNS) {
      const rows = await trx(table).whereNotNull(column).select('id', column);
      for (const row of rows) {
        const stored: string = row[column];
        const plaintext = isSealed(stored) ? open(oldKey, purpose, stored) : stored.startsWith(LEGACY_PREFIX) ? stored.slice(LEGACY_PREFIX.length) : undefined;
        if (plaintext === undefined) throw new Error(`${table}.${column} of row ${row.id} is neither sealed nor marked as stored before sealing`);
        await trx(table)
          .where('id', row.id)
          .update({ [column]: seal(newKey, purpose, plaintext) });
      }
      counts[`${table}.${column}`] = rows.length;
    }
    await trx('settings')
      .where('name', KEY_CHECK.name)
      .update({ value: seal(newKey, KEY_CHECK.purpose, KEY_CHECK.text) });
    return counts;
  });
}
