import type { Knex } from 'knex';

// Push records that must not be tried again by themselves. `interruptions` counts the
// runs that ended because their node died (a stale lease taken over, or a restarted node
// taking back its own claims); `parked_at` is set when a record is parked: after 3 such
// deaths, or at once when recording fails for a reason of its own (a data error that
// would fail the same way on every try). A parked record is never claimed again and does
// not hold up the later records of its repository.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_records', (t) => {
    t.integer('interruptions').notNullable().defaultTo(0);
    t.bigInteger('parked_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('push_records', (t) => {
    t.dropColumn('interruptions');
    t.dropColumn('parked_at');
  });
}
