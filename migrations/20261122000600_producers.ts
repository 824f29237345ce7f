import type { Knex } from 'knex';

// The things the event producers of SPEC §6 change. Issues and labels already exist
// (20261122000200); a pull request is an `issues` row of kind 'pull' plus the
// PR-only fields here, so both share one number sequence per repository.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('comments', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.integer('issue_id').notNullable().references('issues.id').onDelete('CASCADE');
    t.text('body').notNullable();
    t.integer('author_id').references('users.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['issue_id', 'id']);
  });
  await knex.schema.createTable('pull_requests', (t) => {
    t.integer('issue_id').primary().references('issues.id').onDelete('CASCADE');
    t.string('head_ref', 255).notNullable();
    t.string('head_sha', 64).notNullable();
    t.string('base_ref', 255).notNullable();
    t.string('base_sha', 64).notNullable();
    t.boolean('merged').notNullable().defaultTo(false);
    t.bigInteger('merged_at');
    t.string('merge_commit_sha', 64);
    t.index(['head_ref']);
  });
  await knex.schema.createTable('releases', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('tag_name', 255).notNullable();
    t.string('name', 255).notNullable().defaultTo('');
    t.text('body').notNullable().defaultTo('');
    t.boolean('draft').notNullable().defaultTo(false);
    t.boolean('prerelease').notNullable().defaultTo(false);
    t.string('target_commitish', 255).notNullable();
    t.integer('author_id').references('users.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('published_at');
    t.unique(['repository_id', 'tag_name']);
  });
  await knex.schema.createTable('pipelines', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.string('ref', 1024).notNullable();
    t.string('sha', 64).notNullable();
    t.string('status', 16).notNullable();
    t.integer('author_id').references('users.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await knex.schema.createTable('agent_actions', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.string('action', 255).notNullable();
    t.text('summary').notNullable();
    t.string('target_type', 16).notNullable();
    t.string('target_id', 64).notNullable();
    t.integer('author_id').references('users.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['agent_actions', 'pipelines', 'releases', 'pull_requests', 'comments']) await knex.schema.dropTableIfExists(table);
}
