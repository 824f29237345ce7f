import type { Knex } from 'knex';

// Parking of deliveries whose attempts keep dying with their node (src/delivery/store/claim.ts):
// `interruptions` counts the claims of a delivery that died while its attempt may have
// been in flight, `in_flight` marks a claim whose attempt was started (written only for
// deliveries already interrupted once, so the common path costs nothing more). A
// delivery parked after 3 interruptions ends `failed` with an error beginning `parked:`;
// the partial index keeps /metrics' count of them cheap.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.integer('interruptions').notNullable().defaultTo(0);
    t.boolean('in_flight').notNullable().defaultTo(false);
  });
  await knex.raw(`CREATE INDEX deliveries_parked ON deliveries (id) WHERE status = 'failed' AND error LIKE 'parked:%'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deliveries_parked');
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropColumn('in_flight');
    t.dropColumn('interruptions');
  });
}
