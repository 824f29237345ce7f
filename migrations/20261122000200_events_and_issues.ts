import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // The outbox: every repository event, with its payload bytes fixed when it happened.
  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('type', 32).notNullable();
    t.string('action', 32);
    t.string('ref', 1024);
    t.integer('sender_id').references('users.id').onDelete('SET NULL');
    t.text('payload').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['repository_id', 'id']);
  });
  // Issues and pull requests share one number sequence per repository.
  await knex.schema.createTable('issues', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.integer('number').notNullable();
    t.string('kind', 16).notNullable().defaultTo('issue');
    t.string('title', 1024).notNullable();
    t.text('body').notNullable().defaultTo('');
    t.string('state', 16).notNullable().defaultTo('open');
    t.text('assignees').notNullable().defaultTo('[]');
    t.integer('author_id').references('users.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('closed_at');
    t.unique(['repository_id', 'number']);
  });
  await knex.schema.createTable('labels', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('name', 255).notNullable();
    t.unique(['repository_id', 'name']);
  });
  await knex.schema.createTable('issue_labels', (t) => {
    t.integer('issue_id').notNullable().references('issues.id').onDelete('CASCADE');
    t.integer('label_id').notNullable().references('labels.id').onDelete('CASCADE');
    t.primary(['issue_id', 'label_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['issue_labels', 'labels', 'issues', 'events']) await knex.schema.dropTableIfExists(table);
}
