import type { Knex } from 'knex';

// Event payloads are stored only for events some webhook receives, and pruned with
// their deliveries: the payload column becomes nullable, deliveries are found by event
// (the pruner asks "does any delivery still need this event?", and deleting an event
// cascades to its deliveries), and old events are found by time.
//
// SQLite cannot drop a NOT NULL in place: Knex rebuilds the table. Rebuilding a table
// other tables reference must run with foreign keys off, or dropping the old copy
// would cascade to every delivery; the pragma is ignored inside a transaction, so this
// migration runs without one (Knex turns the checks off, copies, turns them back on
// and checks the references).
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.text('payload').nullable().alter();
  });
  await knex.schema.alterTable('events', (t) => t.index(['created_at'], 'events_created'));
  await knex.schema.alterTable('deliveries', (t) => t.index(['event_id'], 'deliveries_by_event'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => t.dropIndex(['event_id'], 'deliveries_by_event'));
  await knex.schema.alterTable('events', (t) => t.dropIndex(['created_at'], 'events_created'));
  await knex('events').whereNull('payload').delete();
  await knex.schema.alterTable('events', (t) => {
    t.text('payload').notNullable().alter();
  });
}
