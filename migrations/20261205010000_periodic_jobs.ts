import type { Knex } from 'knex';

// Periodic jobs shared by every node (src/work/periodic.ts): one row a job, with when its
// last turn was taken and by which node; the node that moves last_run_at on takes the turn.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('periodic_jobs', (t) => {
    t.string('name', 64).primary();
    t.bigInteger('last_run_at').notNullable();
    t.string('last_node', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('periodic_jobs');
}
