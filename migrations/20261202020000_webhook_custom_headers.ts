import type { Knex } from 'knex';

// A webhook's custom headers (SPEC §5.2): their names in the clear (the record shows
// them, with masked values), their names and values sealed like the secret (registered
// in src/secrets/columns.ts), null when there are none. Read by the delivery claim with
// the URL and secret.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.text('header_names').notNullable().defaultTo('[]');
    t.text('headers').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.dropColumn('headers');
    t.dropColumn('header_names');
  });
}
