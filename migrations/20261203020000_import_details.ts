import type { Knex } from 'knex';

// What an import's pages and records explain (SPEC §8.1): the object total and transfer
// rate git reports while receiving; why a failed job failed, as a stable code and one
// readable sentence (git's own words stay in `error`); and the job a retry started from.
// A failed job now keeps its sealed credentials until a retry takes them over.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    t.bigInteger('objects_total');
    t.bigInteger('bytes_per_second');
    t.string('error_code', 32);
    t.text('error_reason');
    t.integer('retry_of');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    t.dropColumn('retry_of');
    t.dropColumn('error_reason');
    t.dropColumn('error_code');
    t.dropColumn('bytes_per_second');
    t.dropColumn('objects_total');
  });
}
