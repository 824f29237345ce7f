import type { TestWharf } from '../helpers/wharf.ts';
import type { Repository } from '../../src/domain/repos.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import { wake } from '../../src/services.ts';
import type { EventType } from '../../src/events/types.ts';

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
