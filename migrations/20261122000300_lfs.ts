import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Objects are stored once, content-addressed; each repository holding one has a link row.
  await knex.schema.createTable('lfs_objects', (t) => {
    t.string('oid', 64).primary();
    t.bigInteger('size').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('repository_lfs_objects', (t) => {
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('oid', 64).notNullable().references('lfs_objects.oid');
    t.bigInteger('created_at').notNullable();
    t.primary(['repository_id', 'oid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('repository_lfs_objects');
  await knex.schema.dropTableIfExists('lfs_objects');
}
