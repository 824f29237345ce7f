import type { Knex } from 'knex';

// How a push record's events were split into chunks (src/pushes/chunking.ts):
// chunks_done counts chunks of that scheme, so a record half recorded by an earlier
// version is resumed with the split it began with. NULL (every record written before
// this column) is scheme 1, fixed chunks of 50 refs; 2 grows each chunk from 50 refs.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_records', (t) => {
    t.integer('chunking').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_records', (t) => {
    t.dropColumn('chunking');
  });
}
