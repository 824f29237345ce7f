import type { Knex } from 'knex';

// Endpoint health and pacing (SPEC §5.2 max_rate, §5.5):
// - max_rate: deliveries per second to the webhook, or null; pace_at: when its next
//   paced attempt may start (reserved slot by slot, shared by every node).
// - not_before: a 429/503's Retry-After, for every delivery of the webhook.
// - failing_attempts: failed attempts in a row, no success between.
// - health_state `healthy` | `paused` | `disabled`, since when and why; while paused,
//   probe_at is the next probe's time (or its lease's end while one is out),
//   probe_interval_ms the current wait between probes, probe_delivery_id the one
//   delivery the probe may send.
// A held delivery is a pending one with no next_attempt_at: nothing makes it due but a
// probe or a resume.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    t.integer('max_rate').nullable();
    t.bigInteger('pace_at').nullable();
    t.bigInteger('not_before').nullable();
    t.integer('failing_attempts').notNullable().defaultTo(0);
    t.text('health_state').notNullable().defaultTo('healthy');
    t.bigInteger('health_since').nullable();
    t.text('health_reason').nullable();
    t.bigInteger('probe_at').nullable();
    t.bigInteger('probe_interval_ms').nullable();
    t.bigInteger('probe_delivery_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (t) => {
    for (const c of [
      'probe_delivery_id',
      'probe_interval_ms',
      'probe_at',
      'health_reason',
      'health_since',
      'health_state',
      'failing_attempts',
      'not_before',
      'pace_at',
      'max_rate',
    ])
      t.dropColumn(c);
  });
}
