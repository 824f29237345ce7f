import type { Knex } from 'knex';

// Organization webhooks (SPEC §5.4): a webhook belongs to a repository or to an
// organization (exactly one of repository_id, org_id), one URL once per owner.
// Events name their organization too, and an event of the organization itself (an
// import that made no repository, a deleted repository) names no repository.
//
// SQLite cannot drop a NOT NULL in place: Knex rebuilds the tables, which other tables
// reference, so this runs without a transaction (foreign keys off while copying, as in
// 20261124070000_event_payload_storage.ts).
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.integer('repository_id').nullable().alter();
  });
  await knex.schema.alterTable('webhooks', (t) => {
    t.integer('org_id').nullable().references('orgs.id').onDelete('CASCADE');
    t.unique(['org_id', 'url'], { indexName: 'webhooks_org_url' });
  });
  await knex.schema.alterTable('events', (t) => {
    t.integer('repository_id').nullable().alter();
  });
  await knex.schema.alterTable('events', (t) => {
    t.integer('org_id').nullable().references('orgs.id').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('webhooks').whereNull('repository_id').delete();
  await knex('events').whereNull('repository_id').delete();
  await knex.schema.alterTable('events', (t) => {
    t.dropForeign(['org_id']);
    t.dropColumn('org_id');
  });
  await knex.schema.alterTable('webhooks', (t) => {
    t.dropUnique(['org_id', 'url'], 'webhooks_org_url');
    t.dropForeign(['org_id']);
    t.dropColumn('org_id');
  });
  await knex.schema.alterTable('events', (t) => {
    t.integer('repository_id').notNullable().alter();
  });
  await knex.schema.alterTable('webhooks', (t) => {
    t.integer('repository_id').notNullable().alter();
  });
}
