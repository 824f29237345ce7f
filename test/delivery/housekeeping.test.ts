import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver, waitFor } from './receiver.ts';
import { buildWebhook } from './build.ts';
import { startSibling } from './servers.ts';
import { connect } from '../../src/db/connect.ts';

t.test('deliveries leave from DELIVERY_SOURCE_ADDRESS; /meta publishes the ranges', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', DELIVERY_SOURCE_ADDRESS: '127.0.0.2', DELIVERY_SOURCE_RANGES: '127.0.0.0/8' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const sources: string[] = [];
  const rx = await startReceiver(t);
  rx.server.on('request', (req) => sources.push(String(req.socket.remoteAddress)));
  await buildWebhook(w, repo, rx);
  await waitFor('the creation ping', () => rx.received.length === 1);
  t.same(sources, ['127.0.0.2'], 'the socket was bound to the configured source address');
  const meta = await w.api('GET', '/api/v1/meta', { token: null });
  t.same(meta.body.hooks, ['127.0.0.0/8']);
});

t.test('finished deliveries older than DELIVERY_RETENTION are pruned; pending ones are kept', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const hook = await buildWebhook(w, repo, rx);
  await waitFor('the creation ping recorded', async () => (await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).body.successful === 1);
  const off = await buildWebhook(w, repo, rx, { url: 'http://127.0.0.1:9/off', active: false });
  await w.stop();
  // A pending delivery, due in an hour: pruning must leave it alone.
  const db = connect(w.database.url);
  const now = Date.now();
  await db('deliveries').insert({ webhook_id: off.id, payload: '{}', guid: '00000000-0000-4000-8000-000000000000', event: 'ping', status: 'pending', attempts: 0, next_attempt_at: now + 3_600_000, created_at: now });
  await db.destroy();
  // A process with a 1 ms retention prunes at start-up.
  const sibling = await startSibling(t, w, { WEBHOOK_ALLOWED_HOSTS: 'loopback', DELIVERY_RETENTION: '1ms' });
  const rows = await waitFor('the finished ping pruned', async () => {
    const r = await sibling.services.db('deliveries').select('webhook_id', 'status');
    return r.every((d: any) => d.status === 'pending') ? r : null;
  });
  t.same(rows.map((r: any) => [Number(r.webhook_id), r.status]), [[off.id, 'pending']], 'only the pending delivery is left');
  t.equal(Number((await sibling.services.db('delivery_attempts').count({ n: '*' }))[0].n), 0, 'attempts went with their deliveries');
  await sibling.stop();
});
