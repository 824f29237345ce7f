import type { Knex } from 'knex';

// Request counts of the rate limit (SPEC §2), shared by every node of one Postgres
// database. The shape is the one rate-limiter-flexible's Postgres store reads and
// writes: key (`<kind>:<hash or address>`), points used, window end in epoch ms.
// SQLite serves one process, whose counts stay in memory: no table there.

export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('rate_limits');
}
