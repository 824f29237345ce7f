import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { NewEvent } from '../events/types.ts';
import { toWebhook, type Webhook } from './model.ts';
import { webhookWants } from './match.ts';

/**
 * The webhooks each event goes to, in the caller's transaction: active, wanting the type
 * (and branch), and, for an event recorded after the fact, existing when it happened.
 * One list per event, in order; an empty list means no webhook receives it.
 */
export async function receiversOf(trx: Knex | Knex.Transaction, events: NewEvent[]): Promise<Webhook[][]> {
  const repoIds = [...new Set(events.map((e) => e.repositoryId))];
  const hooks = new Map<number, Webhook[]>();
  if (repoIds.length > 0) {
    for (const row of await trx('webhooks').whereIn('repository_id', repoIds).where('active', true)) {
      const hook = toWebhook(row);
      hooks.set(hook.repository_id, [...(hooks.get(hook.repository_id) ?? []), hook]);
    }
  }
  return events.map((event) =>
    (hooks.get(event.repositoryId) ?? []).filter(
      // A webhook added after the event happened (while a push was being recorded) does not get it.
      (hook) => webhookWants(hook, event) && !(event.occurredAt !== undefined && hook.created_at > event.occurredAt),
    ),
  );
}

/**
 * Writes one pending delivery per (event, receiving webhook) in the caller's transaction,
 * so a committed event always has its deliveries (the outbox). The body is a reference
 * to the event's payload bytes, fixed when the event was written. Returns how many
 * deliveries were written.
 */
export async function writeDeliveries(trx: Knex | Knex.Transaction, events: NewEvent[], receivers: Webhook[][], eventIds: number[]): Promise<number> {
  const now = Date.now();
  const rows: Record<string, unknown>[] = [];
  events.forEach((event, i) => {
    for (const hook of receivers[i]) {
      rows.push({
        webhook_id: hook.id,
        event_id: eventIds[i],
        guid: randomUUID(),
        event: event.type,
        action: event.action ?? null,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
      });
    }
  });
  for (let i = 0; i < rows.length; i += 500) await trx('deliveries').insert(rows.slice(i, i + 500));
  return rows.length;
}
