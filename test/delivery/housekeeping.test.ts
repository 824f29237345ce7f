import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook, raise } from './build.ts';
import { startSibling } from './servers.ts';
import { connect } from '../../src/db/connect.ts';

t.test('deliveries leave from DELIVERY_SOURCE_ADDRESS; /meta publishes the ranges', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', DELIVERY_SOURCE_ADDRESS: '127.0.0.2', DELIVERY_SOURCE_RANGES: '127.0.0.0/8' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const sources: string[] = [];
  const rx = await startReceiver(t);
  rx.server.on('request', (req) => sources.push(String(req.socket.remoteAddress)));
  await buildWebhook(w, repo, rx);
  await waitFor(() => rx.received.length === 1, { what: 'the creation ping' });
  t.same(sources, ['127.0.0.2'], 'the socket was bound to the configured source address');
  const meta = await w.api('GET', '/api/v1/meta', { token: null });
  t.same(meta.body.hooks, ['127.0.0.0/8']);
});

t.test('finished deliveries older than DELIVERY_RETENTION are pruned; pending ones are kept', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const hook = await buildWebhook(w, repo, rx);
  await waitFor(async () => (await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).body.successful === 1, { what: 'the creation ping recorded' });
  const off = await buildWebhook(w, repo, rx, { url: 'http://127.0.0.1:9/off', active: false });
  await w.stop();
  // A pending delivery, due in an hour: pruning must leave it alone.
  const db = connect(w.database.url);
  const now = Date.now();
  await db('deliveries').insert({
    webhook_id: off.id,
    payload: '{}',
    guid: '00000000-0000-4000-8000-000000000000',
    event: 'ping',
    status: 'pending',
    attempts: 0,
    next_attempt_at: now + 3_600_000,
    created_at: now,
  });
  await db.destroy();
  // A process with a 1 ms retention prunes at start-up.
  // Its first turn to prune comes a period after the first node's (src/work/periodic.ts): a short period.
  const sibling = await startSibling(t, w, { WEBHOOK_ALLOWED_HOSTS: 'loopback', DELIVERY_RETENTION: '1ms', DELIVERY_PRUNE_EVERY: '1s' });
  const rows = await waitFor(
    async () => {
      const r = await sibling.services.db('deliveries').select('webhook_id', 'status');
      return r.every((d: any) => d.status === 'pending') ? r : null;
    },
    { what: 'the finished ping pruned' },
  );
  t.same(
    rows.map((r: any) => [Number(r.webhook_id), r.status]),
    [[off.id, 'pending']],
    'only the pending delivery is left',
  );
  t.equal(Number((await sibling.services.db('delivery_attempts').count({ n: '*' }))[0].n), 0, 'attempts went with their deliveries');
  await sibling.stop();
});

t.test('event payloads are pruned with their deliveries after DELIVERY_RETENTION; events still needed keep theirs', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, (r) => ({ status: r.path === '/failing' ? 500 : 200 }));
  const hook = await buildWebhook(w, repo, rx, { events: ['push'] });
  const failing = await buildWebhook(w, repo, rx, { url: `${rx.url}/failing`, events: ['release'] });
  await waitFor(() => rx.received.length === 2, { what: 'the creation pings' });
  // old: delivered long ago. unheard: nobody wanted it. pending: its delivery is still being retried.
  // redeliverable: old, but its delivery finished recently. recent: new and delivered.
  const [old, unheard, pending, redeliverable, recent] = await raise(w, repo, [
    { type: 'push' },
    { type: 'issue' },
    { type: 'release' },
    { type: 'push' },
    { type: 'push' },
  ]);
  await waitFor(() => rx.received.length === 6, { what: 'every first attempt' });
  const db = w.running.services.db;
  await waitFor(async () => Number((await db('deliveries').whereNotNull('last_attempt_at').count({ n: '*' }))[0].n) === 6, { what: 'the results written' });
  await w.stop();

  // Age the rows as days would: events two hours old, their deliveries finished then, but one.
  const aged = connect(w.database.url);
  const twoHoursAgo = Date.now() - 2 * 3_600_000;
  await aged('events').whereIn('id', [old, unheard, pending, redeliverable]).update({ created_at: twoHoursAgo });
  await aged('deliveries').whereIn('event_id', [old]).update({ finished_at: twoHoursAgo });
  await aged('deliveries').where({ webhook_id: hook.id, event: 'ping' }).update({ finished_at: twoHoursAgo });
  await aged('deliveries')
    .where({ webhook_id: failing.id, event: 'release' })
    .update({ next_attempt_at: Date.now() + 3_600_000 });
  const pendingDelivery = await aged('deliveries').where('event_id', pending).first('status');
  t.equal(pendingDelivery.status, 'pending', 'the failing delivery waits for its retry');
  await aged.destroy();

  const sibling = await startSibling(t, w, { WEBHOOK_ALLOWED_HOSTS: 'loopback', DELIVERY_RETENTION: '1h', DELIVERY_PRUNE_EVERY: '1s' });
  const sdb = sibling.services.db;
  const left = await waitFor(
    async () => {
      const rows = await sdb('events').orderBy('id').select('id', 'payload');
      return rows.length === 3 ? rows : null;
    },
    { what: 'the old events pruned' },
  );
  t.same(
    left.map((r: any) => Number(r.id)),
    [pending, redeliverable, recent],
    'the delivered-long-ago and the unheard events are gone',
  );
  t.ok(
    left.every((r: any) => typeof r.payload === 'string' && r.payload.length > 0),
    'the events kept keep their payloads',
  );
  t.same(
    (await sdb('deliveries').whereNotNull('event_id').orderBy('event_id').pluck('event_id')).map(Number),
    [pending, redeliverable, recent],
    'only their deliveries are left',
  );

  // The recently finished delivery of the two-hour-old event can still be redelivered: the same bytes.
  const [delivery] = await sdb('deliveries').where('event_id', redeliverable).select('id', 'guid');
  const original = rx.received.find((r) => r.guid === delivery.guid);
  t.equal(original?.body.toString('utf8'), left[1].payload, 'the original delivery sent the stored payload');
  const retry = await fetch(`${sibling.url}/api/v1/webhooks/${hook.id}/deliveries/${delivery.id}/retry`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.adminToken}` },
  });
  t.equal(retry.status, 202);
  const again = await waitFor(() => rx.received.find((r) => r.guid === original!.guid && r !== original), { what: 'the redelivery' });
  t.ok(again.body.equals(original!.body), 'the redelivery sent the same bytes');
  await sibling.stop();
});
