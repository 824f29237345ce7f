import type { Knex } from 'knex';

// A webhook's header style: 'wharf' (Wharf's own headers) or 'github' (GitHub's names
// beside them, same values). Read by the delivery claim with the URL and secret.
// The (webhook_id, guid) index serves bulk redelivery's "not redelivered yet": a later
// delivery of the same webhook with the same guid.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.string('header_style', 16).notNullable().defaultTo('wharf');
  });
  await knex.schema.alterTable('deliveries', (t) => {
    t.index(['webhook_id', 'guid', 'id'], 'deliveries_by_guid');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropIndex(['webhook_id', 'guid', 'id'], 'deliveries_by_guid');
  });
  await knex.schema.alterTable('webhooks', (t) => {
    t.dropColumn('header_style');
  });
}
