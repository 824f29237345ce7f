import type { Knex } from 'knex';

// Attempts are counted when their result is written, no longer when they are claimed.
// `claims` counts the claims of a delivery since its last written result: a claim whose
// process died before the result (an attempt in flight, or a delivery claimed ahead and
// never started) leaves it raised, and the dispatcher stops re-sending a delivery whose
// claims keep dying (see src/delivery/store/claim.ts). It is also the claim's token: a result
// is written only by the claim that is still the delivery's latest.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.integer('claims').notNullable().defaultTo(0);
  });
  // Leases taken before this change had already counted their attempt: give it back, as
  // a claim without a result, so the attempt is made (and counted) when the lease runs out.
  await knex('deliveries')
    .where('status', 'pending')
    .whereNotNull('lease_owner')
    .where('attempts', '>', 0)
    .update({ attempts: knex.raw('attempts - 1'), claims: 1 });
}

export async function down(knex: Knex): Promise<void> {
  await knex('deliveries')
    .where('status', 'pending')
    .whereNotNull('lease_owner')
    .update({ attempts: knex.raw('attempts + 1') });
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropColumn('claims');
  });
}
