import type { Db } from '../../src/db/connect.ts';
import type { TestWharf } from '../helpers/wharf.ts';
import type { Repository } from '../../src/domain/repos.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import { wake } from '../../src/services.ts';
import type { EventType } from '../../src/events/types.ts';
import type { AttemptResult } from '../../src/delivery/store/complete.ts';

/** Creates a webhook through the API and registers its secret with the receiver; returns the API answer's body. */
export async function buildWebhook(
  w: TestWharf,
  repo: Repository,
  receiver: { url: string; secrets: Map<number, string> },
  body: Record<string, unknown> = {},
  token?: string,
): Promise<any> {
  const res = await w.api('POST', `/api/v1/repos/${repo.org}/${repo.name}/webhooks`, { token, body: { url: `${receiver.url}/hook`, ...body } });
  if (res.status !== 201) throw new Error(`webhook not created: ${res.status} ${res.text}`);
  receiver.secrets.set(res.body.id, (body.secret as string | undefined) ?? res.body.secret);
  return res.body;
}

/** Records events through the outbox, as a producer does, and wakes the dispatcher after the commit. */
export async function raise(w: TestWharf, repo: Repository, events: { type?: EventType; ref?: string; n?: number }[]): Promise<number[]> {
  const services = w.running.services;
  const list = events.flatMap((e) =>
    Array.from({ length: e.n ?? 1 }, (_, i) => ({
      repositoryId: repo.id,
      type: e.type ?? 'push',
      ref: e.ref ?? (e.type && e.type !== 'push' ? undefined : 'refs/heads/main'),
      action: e.type && e.type !== 'push' ? 'opened' : undefined,
      senderId: null,
      payload: { event: e.type ?? 'push', seq: i, ref: e.ref ?? 'refs/heads/main', text: 'ünïcode ✓' },
    })),
  );
  const ids = await services.db.transaction((trx) => recordEvents(trx, list));
  wake(services).deliveries();
  return ids;
}

/** All deliveries of a webhook through the API (every page). */
export async function allDeliveries(w: TestWharf, hookId: number): Promise<{ counts: any; deliveries: any[] }> {
  const deliveries: any[] = [];
  let cursor: string | null = null;
  let counts: any;
  do {
    const res: any = await w.api('GET', `/api/v1/webhooks/${hookId}/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
    counts ??= { total: res.body.total, successful: res.body.successful, failed: res.body.failed, pending: res.body.pending };
    deliveries.push(...res.body.deliveries);
    cursor = res.body.next_cursor;
  } while (cursor);
  return { counts, deliveries };
}

/**
 * When each attempt of a webhook's deliveries (those after `afterDeliveryId`) was started,
 * as recorded, in order: what max_rate paces (a receiver's arrivals add the way there).
 */
export async function attemptStarts(db: Db, hookId: number, afterDeliveryId = 0): Promise<number[]> {
  const rows: { started_at: unknown }[] = await db('delivery_attempts')
    .join('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
    .where('deliveries.webhook_id', hookId)
    .where('deliveries.id', '>', afterDeliveryId)
    .orderBy('delivery_attempts.started_at')
    .select('delivery_attempts.started_at');
  return rows.map((r) => Number(r.started_at));
}

/** A successful first-claim attempt result for the result write (complete.ts), with `over` changed. */
export const attemptResult = (deliveryId: number, attempt: number, over: Partial<AttemptResult> = {}): AttemptResult => ({
  deliveryId,
  attempt,
  claims: 1,
  status: 'success',
  nextAttemptAt: null,
  outcome: 'delivered',
  reason: null,
  startedAt: Date.now(),
  endedAt: Date.now() + 5,
  durationMs: 5,
  statusCode: 200,
  error: null,
  requestHeaders: { 'x-service-delivery-attempt': String(attempt) },
  responseHeaders: { 'content-type': 'text/plain' },
  responseBody: 'ok',
  hookId: 0,
  health: null,
  retryAfterAt: null,
  ...over,
});
