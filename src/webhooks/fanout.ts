import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { NewEvent } from '../events/types.ts';
import type { EventFanOut } from '../events/fanOut.ts';
import { ORG_ONLY_EVENTS, toWebhook, type Webhook } from './model.ts';
import { webhookWants } from './match.ts';

/** Event types only organization webhooks receive (SPEC §5.4). */
const ORG_ONLY: ReadonlySet<string> = new Set(ORG_ONLY_EVENTS);

/** Webhooks that hear events: active ones, and those disabled by Wharf (their deliveries are written held). */
const heard = (q: Knex.QueryBuilder) => q.where('active', true).orWhere('health_state', 'disabled');

/**
 * The webhooks each event goes to, in the caller's transaction: active or disabled by Wharf, wanting the type
 * (and branch), and, for an event recorded after the fact, existing when it happened.
 * An event of a repository reaches its repository's webhooks and its organization's
 * (SPEC §5.4: one delivery per webhook); `repository` and `import` events, the
 * organization's webhooks only. One list per event, in order; an empty list means no
 * webhook receives it.
 */
export async function receiversOf(trx: Knex | Knex.Transaction, events: NewEvent[]): Promise<Webhook[][]> {
  const repoIds = [...new Set(events.flatMap((e) => (e.repositoryId === null ? [] : [e.repositoryId])))];
  const orgOf = new Map<number, number>();
  const hooks = new Map<number, Webhook[]>();
  const orgHooks = new Map<number, Webhook[]>();
  if (repoIds.length > 0) {
    for (const row of await trx('repositories').whereIn('id', repoIds).select('id', 'org_id')) orgOf.set(Number(row.id), Number(row.org_id));
    for (const row of await trx('webhooks').whereIn('repository_id', repoIds).where(heard)) {
      const hook = toWebhook(row);
      hooks.set(hook.repository_id!, [...(hooks.get(hook.repository_id!) ?? []), hook]);
    }
  }
  const eventOrg = (e: NewEvent) => e.orgId ?? (e.repositoryId === null ? undefined : orgOf.get(e.repositoryId));
  const orgIds = [...new Set(events.flatMap((e) => eventOrg(e) ?? []))];
  if (orgIds.length > 0) {
    for (const row of await trx('webhooks').whereIn('org_id', orgIds).where(heard)) {
      const hook = toWebhook(row);
      orgHooks.set(hook.org_id!, [...(orgHooks.get(hook.org_id!) ?? []), hook]);
    }
  }
  return events.map((event) => {
    const org = eventOrg(event);
    const ofOrg = org === undefined ? [] : (orgHooks.get(org) ?? []);
    const candidates = ORG_ONLY.has(event.type) ? ofOrg : [...(event.repositoryId === null ? [] : (hooks.get(event.repositoryId) ?? [])), ...ofOrg];
    return candidates.filter(
      // A webhook added after the event happened (while a push was being recorded) does not get it.
      (hook) => webhookWants(hook, event) && !(event.occurredAt !== undefined && hook.created_at > event.occurredAt),
    );
  });
}

/**
 * Writes one pending delivery per (event, receiving webhook) in the caller's transaction,
 * so a committed event always has its deliveries (the outbox). The body is a reference
 * to the event's payload bytes, fixed when the event was written. A delivery to a paused
 * webhook, or one disabled by Wharf, is written held (no next attempt). Returns how many
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
        // A paused or disabled webhook's new deliveries are held from the start (SPEC §5.5).
        next_attempt_at: hook.health.state === 'healthy' ? now : null,
        created_at: now,
      });
    }
  });
  for (let i = 0; i < rows.length; i += 500) await trx('deliveries').insert(rows.slice(i, i + 500));
  return rows.length;
}

/** The webhook fan-out as the outbox takes it; the composition root registers it (useFanOut, src/events/fanOut.ts). */
export const webhookFanOut: EventFanOut<Webhook> = { receiversOf, writeDeliveries };
