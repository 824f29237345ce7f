import type { Knex } from 'knex';

// Pushes whose events are still to be recorded. The smart-HTTP route writes one row per
// landed push before the push's answer ends; any node's push recorder claims it (a
// lease: locked_by/locked_at), records its events chunk by chunk (chunks_done moves in
// the same transaction as each chunk's events) and deletes it when the last chunk is in.
// A failure keeps the row with its attempt count and the time of the next try.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('push_records', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.integer('sender_id').references('users.id').onDelete('SET NULL');
    t.bigInteger('landed_at').notNullable();
    // git's "old new ref" lines, and "<sha> <ref>" lines for every ref just after the push
    // (null when git could not list them).
    t.text('updates').notNullable();
    t.text('refs_after');
    t.integer('chunks_done').notNullable().defaultTo(0);
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_try_at').notNullable().defaultTo(0);
    t.string('locked_by', 128);
    t.bigInteger('locked_at');
    t.text('last_error');
    t.index(['repository_id', 'id']);
    t.index(['next_try_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('push_records');
}
