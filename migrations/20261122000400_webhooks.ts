import type { Knex } from 'knex';

// Webhooks, their deliveries (the persisted retry schedule) and every attempt made.
// A delivery is due when status = 'pending' and next_attempt_at <= now. A claim moves
// next_attempt_at to the end of its lease, so a delivery whose process died mid-attempt
// becomes due again by itself when the lease runs out: one index serves both cases.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhooks', (t) => {
    t.increments('id');
    t.integer('repository_id').notNullable().references('repositories.id').onDelete('CASCADE');
    t.string('url', 2048).notNullable();
    t.string('content_type', 16).notNullable().defaultTo('json');
    // Kept as given: deliveries are signed with it. Never returned or logged after creation.
    t.string('secret', 1024).notNullable();
    t.text('events').notNullable(); // JSON array of types, or ["*"]
    t.boolean('active').notNullable().defaultTo(true);
    t.string('branch_filter', 255);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['repository_id', 'url']);
  });
  await knex.schema.createTable('deliveries', (t) => {
    t.bigIncrements('id');
    t.integer('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE');
    // The body is the event's payload bytes (event_id), or, for pings, bytes of its own.
    t.bigInteger('event_id').references('events.id').onDelete('CASCADE');
    t.text('payload');
    t.string('guid', 36).notNullable();
    t.string('event', 32).notNullable();
    t.string('action', 32);
    t.string('status', 16).notNullable().defaultTo('pending'); // pending | success | failed
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_attempt_at');
    t.string('lease_owner', 64);
    t.boolean('redelivery').notNullable().defaultTo(false);
    t.bigInteger('redelivery_of');
    t.integer('status_code');
    t.string('error', 255);
    t.integer('duration_ms');
    t.bigInteger('last_attempt_at');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('finished_at');
    t.index(['status', 'next_attempt_at'], 'deliveries_due');
    t.index(['webhook_id', 'id'], 'deliveries_by_webhook');
    t.index(['finished_at'], 'deliveries_finished');
  });
  await knex.schema.createTable('delivery_attempts', (t) => {
    t.bigIncrements('id');
    t.bigInteger('delivery_id').notNullable().references('deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.bigInteger('started_at').notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('status_code');
    t.string('error', 255);
    t.text('request_headers').notNullable();
    t.text('response_headers');
    t.text('response_body');
    t.index(['delivery_id', 'attempt']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['delivery_attempts', 'deliveries', 'webhooks']) await knex.schema.dropTableIfExists(table);
}
