import type { Knex } from 'knex';

// Web UI sessions. The cookie holds a random session id; the row is keyed by its
// SHA-256 and holds the user's API token encrypted with a key derived from that id,
// so neither the database alone nor the cookie alone yields the token.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ui_sessions', (t) => {
    t.string('id_hash', 64).primary();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.string('login', 64).notNullable();
    t.text('token_box').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_seen_at').notNullable();
    t.bigInteger('expires_at').notNullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ui_sessions');
}
