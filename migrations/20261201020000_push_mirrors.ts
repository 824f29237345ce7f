import type { Knex } from 'knex';

// Push mirrors (SPEC §8.1.2): remotes a repository's branches, tags and LFS objects are
// pushed to after each push (sync_on_push) and every interval. A sync is due when
// next_sync_at has passed; a push moves next_sync_at to now and raises `generation`, so
// a push that lands while a sync runs makes the mirror due again when it ends. One sync
// at a time per mirror: a lease (locked_by, lease_expires_at); `interruptions` counts the
// runs whose node died, and a mirror interrupted 3 times is parked (parked_at).
// `credentials` holds the remote's user name and password sealed with SECRET_KEY.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('push_mirrors', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('url', 2048).notNullable();
    t.text('credentials');
    t.boolean('sync_on_push').notNullable().defaultTo(true);
    t.bigInteger('interval_ms').notNullable();
    t.integer('created_by').references('users.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('next_sync_at').notNullable();
    t.integer('generation').notNullable().defaultTo(0);
    t.bigInteger('last_sync_at');
    t.string('last_sync_status', 16);
    t.text('last_error');
    t.string('locked_by', 128);
    t.bigInteger('lease_expires_at');
    t.integer('interruptions').notNullable().defaultTo(0);
    t.bigInteger('parked_at');
    t.index(['repository_id']);
    t.index(['next_sync_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('push_mirrors');
}
