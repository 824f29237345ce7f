import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook, raise } from '../delivery/build.ts';
import { startSibling } from '../delivery/servers.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import { wake } from '../../src/services.ts';

t.test('under the default `external` policy, creation refuses loopback, private, link-local and names resolving inside', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const port = new URL(rx.url).port;
  const refused = [
    `http://127.0.0.1:${port}/`,
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::1]/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://[fd00::1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://[::]/',
    `http://localhost:${port}/`,
  ];
  for (const url of refused) {
    const res = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url } });
    t.equal(res.status, 422, url);
    t.equal(res.body.error.details.length, 1, url);
    t.match(res.body.error.details[0], { path: '/url', message: /^is blocked by host policy \(WEBHOOK_ALLOWED_HOSTS\): / }, url);
  }
  const hook = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: 'http://93.184.215.14/hook', active: false } });
  t.equal(hook.status, 201, 'a public address is accepted');
  const patched = await w.api('PATCH', `/api/v1/repos/acme/app/webhooks/${hook.body.id}`, { body: { url: 'http://[::ffff:7f00:1]/' } });
  t.equal(patched.status, 422, 'PATCH checks the policy too');
  t.equal(rx.received.length, 0, 'nothing reached the receiver');
});

t.test('at delivery time the policy is checked on the address connected to: blocked attempts fail with "blocked by host policy"', async (t) => {
  // Webhooks created while loopback was allowed; then the service runs with `external`.
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const port = new URL(rx.url).port;
  const byAddress = await buildWebhook(w, repo, rx, { url: `http://127.0.0.1:${port}/a` });
  const byName = await buildWebhook(w, repo, rx, { url: `http://localhost:${port}/b` });
  await waitFor(() => rx.received.length === 2, { what: 'creation pings under the loopback policy' });
  await w.stop();

  const strict = await startSibling(t, w, { WEBHOOK_ALLOWED_HOSTS: 'external', WEBHOOK_RETRY_SCHEDULE: '0s,100ms' });
  const services = strict.services;
  await services.db.transaction((trx) =>
    recordEvents(trx, [{ repositoryId: repo.id, type: 'push', ref: 'refs/heads/main', senderId: null, payload: { event: 'push' } }]),
  );
  wake(services).deliveries();
  const finished = await waitFor(
    async () => {
      const rows = await services.db('deliveries').where('event', 'push').select('webhook_id', 'status', 'error', 'attempts');
      return rows.length === 2 && rows.every((r: any) => r.status === 'failed') ? rows : null;
    },
    { what: 'both pushes to fail' },
  );
  for (const row of finished)
    t.match(row, { status: 'failed', error: 'blocked by host policy (loopback address; WEBHOOK_ALLOWED_HOSTS)', attempts: 2 }, `hook ${row.webhook_id}`);
  t.same(new Set(finished.map((r: any) => Number(r.webhook_id))), new Set([byAddress.id, byName.id]));
  t.equal(rx.received.length, 2, 'the receiver saw nothing after the pings');
  await strict.stop();
});

t.test('a host allowed by name still goes through the connector', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'localhost' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const port = new URL(rx.url).port;
  t.equal(
    (await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `http://127.0.0.1:${port}/` } })).status,
    422,
    'the address itself is not allowed',
  );
  const hook = await buildWebhook(w, repo, rx, { url: `http://localhost:${port}/named` });
  await raise(w, repo, [{ type: 'push' }]);
  await waitFor(() => rx.received.length === 2, { what: 'ping and push through the named host' });
  t.ok(rx.received.every((r) => r.hookId === hook.id && r.signatureOk));
});
