import type { Knex } from 'knex';

// Fair delivery (SPEC §5.2): the claim shares the slots among organizations, then among
// their webhooks, counting what each already holds leased; `max_concurrency` caps one
// webhook's attempts in flight (or null for none).
// - deliveries_due_by_webhook: a webhook's due deliveries in order, and the skip scan
//   that finds the webhooks with due work;
// - deliveries_leased: the leases held now, counted per webhook by every claim.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.integer('max_concurrency').nullable();
  });
  await knex.raw(`CREATE INDEX deliveries_due_by_webhook ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending'`);
  await knex.raw(`CREATE INDEX deliveries_leased ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending' AND lease_owner IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deliveries_leased');
  await knex.raw('DROP INDEX deliveries_due_by_webhook');
  await knex.schema.alterTable('webhooks', (t) => {
    t.dropColumn('max_concurrency');
  });
}
