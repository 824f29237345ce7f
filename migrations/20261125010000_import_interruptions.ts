import type { Knex } from 'knex';

// An import counts the runs its node died in (a lease taken over after it ran out, or a
// dead predecessor's claim swept by a restart), so a job that kills its node is parked
// after 3 rather than taken up again forever.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    t.integer('interruptions').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    t.dropColumn('interruptions');
  });
}
