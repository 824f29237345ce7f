import type { Knex } from 'knex';

// Secrets at rest (SPEC §7.8): webhook secrets and import credentials are sealed with
// SECRET_KEY (src/secrets/). A migration cannot know a key that start-up generates, so
// values stored before this change are only marked here (`plain:` prefix, which no
// sealed value has) and start-up seals them once it holds the key.

export async function up(knex: Knex): Promise<void> {
  // Small named values of the installation; `secret_key_check` holds a known text
  // sealed with the key, so a node with another key is refused before any secret exists.
  await knex.schema.createTable('settings', (t) => {
    t.string('name', 100).primary();
    t.text('value').notNullable();
  });
  // A sealed 1,024-character secret is longer than the column was.
  if (knex.client.config.client === 'pg') await knex.raw('ALTER TABLE webhooks ALTER COLUMN secret TYPE text');
  await knex.raw(`UPDATE webhooks SET secret = 'plain:' || secret`);
  await knex.raw(`UPDATE import_jobs SET credentials = 'plain:' || credentials WHERE credentials IS NOT NULL`);
}

// Down drops the settings table only: sealed values stay sealed, as opening them needs the key.
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('settings');
}
