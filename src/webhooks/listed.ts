import type { Db } from '../db/connect.ts';
import type { Delivery } from './deliveries.ts';
import { heldCounts } from './endpointHealth.ts';
import { lastDeliveries } from './history.ts';
import type { Webhook } from './model.ts';

/** A webhook as its lists show it (the API's records and the web UI's pages): with its latest delivery and its held count. */
export interface ListedWebhook {
  hook: Webhook;
  /** The latest delivery, as it stands now (pending ones included); undefined before the first. */
  last: Delivery | undefined;
  /** How many deliveries it holds (SPEC §5.5); 0 for a healthy webhook, which holds none. */
  held: number;
}

/** Webhooks, in their order, each with its latest delivery and held count: two queries, whatever their number. */
export async function withLastDelivery(db: Db, hooks: Webhook[]): Promise<ListedWebhook[]> {
  const last = await lastDeliveries(
    db,
    hooks.map((h) => h.id),
  );
  const held = await heldCounts(
    db,
    hooks.filter((h) => h.health.state !== 'healthy').map((h) => h.id),
  );
  return hooks.map((hook) => ({ hook, last: last.get(hook.id), held: held.get(hook.id) ?? 0 }));
}
