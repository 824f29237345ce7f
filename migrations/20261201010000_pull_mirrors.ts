import type { Knex } from 'knex';

// Pull mirrors until the cutover (SPEC §8.1.1). An import asked with `mirror: true` keeps
// its interval on the job (`mirror_interval_ms`); the job's success creates the
// `repository_mirrors` row in the transaction that creates the repository. The row is the
// mirror's whole state: its source (no credentials in the URL; the credentials sealed
// apart), the schedule, the last result, the lease of the node syncing it, and `pending`:
// the ref updates a sync is about to make ("old new ref" lines), written before the refs
// move and cleared in the transaction that commits their push record, so a sync whose node
// died in between is finished by the next claim. The cutover deletes the row.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    // Null: an ordinary import. Otherwise the repository stays a mirror synced this often.
    t.bigInteger('mirror_interval_ms');
  });
  await knex.schema.createTable('repository_mirrors', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().unique().references('repositories.id').onDelete('CASCADE');
    // As sent, with any user info removed: never holds a credential.
    t.string('source_url', 2048).notNullable();
    // Sealed {username, password} (SECRET_KEY); never returned, never logged.
    t.text('credentials');
    t.string('lfs_url', 2048);
    t.bigInteger('interval_ms').notNullable();
    t.bigInteger('next_sync_at').notNullable();
    t.bigInteger('last_sync_at');
    t.string('last_sync_status', 16);
    t.text('last_error');
    t.string('locked_by', 128);
    t.bigInteger('lease_expires_at');
    t.integer('interruptions').notNullable().defaultTo(0);
    t.text('pending');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['next_sync_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('repository_mirrors');
  await knex.schema.alterTable('import_jobs', (t) => {
    t.dropColumn('mirror_interval_ms');
  });
}
