import type { Knex } from 'knex';

// Times are stored as epoch milliseconds (bigint) so both dialects compare and sort them alike.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.string('login', 64).notNullable().unique();
    t.boolean('is_admin').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('orgs', (t) => {
    t.increments('id');
    t.string('name', 64).notNullable().unique();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('memberships', (t) => {
    t.integer('org_id').notNullable().references('orgs.id').onDelete('CASCADE');
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.string('role', 16).notNullable();
    t.primary(['org_id', 'user_id']);
  });
  await knex.schema.createTable('repositories', (t) => {
    t.increments('id');
    t.integer('org_id').notNullable().references('orgs.id').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('visibility', 16).notNullable().defaultTo('private');
    t.string('default_branch', 255).notNullable().defaultTo('main');
    t.string('description', 1000).notNullable().defaultTo('');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['org_id', 'name']);
  });
  await knex.schema.createTable('access_tokens', (t) => {
    t.increments('id');
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.bigInteger('expires_at');
    t.bigInteger('last_used_at');
    t.bigInteger('revoked_at');
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['access_tokens', 'repositories', 'memberships', 'orgs', 'users']) {
    await knex.schema.dropTableIfExists(table);
  }
}
