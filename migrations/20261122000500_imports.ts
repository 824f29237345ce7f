import type { Knex } from 'knex';

// Repository import jobs (SPEC §8.1). The table is the only durable record of a job:
// a runner claims a job by setting locked_by and a lease; a job whose runner died is
// claimed again once its lease runs out (or at once by a restart on the same host).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('import_jobs', (t) => {
    t.increments('id');
    t.string('status', 16).notNullable().defaultTo('queued');
    t.string('phase', 32);
    t.integer('percent');
    t.bigInteger('objects_received');
    t.bigInteger('bytes_received');
    t.text('error');
    // As sent, with any user info removed: never holds a credential.
    t.string('source_url', 2048).notNullable();
    // JSON {username, password}: never returned, never logged, cleared when the job ends.
    t.text('credentials');
    t.integer('target_org_id').notNullable().references('orgs.id').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('visibility', 16).notNullable();
    t.integer('created_by').references('users.id').onDelete('SET NULL');
    // 'full' (one fetch) or 'incremental' (shallow, deepen in steps, then the rest).
    t.string('strategy', 16).notNullable().defaultTo('full');
    t.integer('attempts').notNullable().defaultTo(0);
    t.string('locked_by', 128);
    t.bigInteger('lease_expires_at');
    t.bigInteger('run_after').notNullable().defaultTo(0);
    t.bigInteger('started_at');
    // JSON {default_branch, branches, tags, lfs_objects, missing_lfs_objects}.
    t.text('result');
    t.integer('repository_id').references('repositories.id').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('finished_at');
    t.index(['target_org_id', 'id']);
    t.index(['finished_at', 'run_after']);
  });
  // One live job per target name; a unique violation from a racing request is a 409.
  await knex.raw('CREATE UNIQUE INDEX import_jobs_live_target ON import_jobs (target_org_id, name) WHERE finished_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('import_jobs');
}
