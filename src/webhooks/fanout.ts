import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { NewEvent } from '../events/types.ts';
import { toWebhook, type Webhook } from './model.ts';
import { webhookWants } from './match.ts';

/**
 * Writes one pending delivery per (event, matching active webhook) in the caller's
 * transaction, so a committed event always has its deliveries (the outbox). The body
 * is a reference to the event's payload bytes, fixed when the event was written.
 * Returns how many deliveries were written.
 */
export async function fanOut(trx: Knex | Knex.Transaction, events: NewEvent[], eventIds: number[]): Promise<number> {
  const repoIds = [...new Set(events.map((e) => e.repositoryId))];
  if (repoIds.length === 0) return 0;
  const hooks = new Map<number, Webhook[]>();
  for (const row of await trx('webhooks').whereIn('repository_id', repoIds).where('active', true)) {
    const hook = toWebhook(row);
    hooks.set(hook.repository_id, [...(hooks.get(hook.repository_id) ?? []), hook]);
  }
  const now = Date.now();
  const rows: Record<string, unknown>[] = [];
  events.forEach((event, i) => {
    for (const hook of hooks.get(event.repositoryId) ?? []) {
      if (!webhookWants(hook, event)) continue;
      // A webhook added after the event happened (while a push was being recorded) does not get it.
      if (event.occurredAt !== undefined && hook.created_at > event.occurredAt) continue;
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
