import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { allDeliveries } from '../delivery/build.ts';

const base = '/api/v1/repos/acme/app/webhooks';

t.test('a host name that does not resolve is accepted; its attempts fail with "dns error" and are retried', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms' } });
  await buildRepo(w, 'acme', 'app');
  const created = await w.api('POST', base, { body: { url: 'https://hooks.wharf-test.invalid/payload' } });
  t.equal(created.status, 201, 'created under the default policy');
  t.equal(created.body.url, 'https://hooks.wharf-test.invalid/payload');
  const ping = await waitFor(
    async () => {
      const { deliveries } = await allDeliveries(w, created.body.id);
      return deliveries.length === 1 && deliveries[0].status === 'failed' ? deliveries[0] : null;
    },
    { what: 'the ping to fail for good' },
  );
  t.match(ping, { event: 'ping', status: 'failed', error: 'dns error', attempts: 3, status_code: null });
  const detail = await w.api('GET', `/api/v1/webhooks/${created.body.id}/deliveries/${ping.id}`);
  t.equal(detail.body.attempts_log.length, 3, 'every attempt of the schedule was made');
  t.ok(
    detail.body.attempts_log.every((a: any) => a.error === 'dns error'),
    'each attempt shows the DNS failure',
  );
  const patched = await w.api('PATCH', `${base}/${created.body.id}`, { body: { url: 'http://other.wharf-test.invalid/' } });
  t.equal(patched.status, 200, 'PATCH accepts one too');
  const inside = await w.api('POST', base, { body: { url: 'http://localhost/' } });
  t.equal(inside.status, 422, 'a name that resolves to a refused address is still refused');
});

t.test('URLs are stored normalized; control characters, spaces and backslashes are refused', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const port = new URL(rx.url).port;
  for (const url of [
    `http://127.0.0.1:${port}/a\r\nX-Injected: 1`,
    `http://127.0.0.1:${port}/a\nb`,
    `http://127.0.0.1:${port}/a\tb`,
    `http://127.0.0.1:${port}/a b`,
    ` http://127.0.0.1:${port}/a`,
    `http://127.0.0.1:${port}\\evil`,
    `http://127.0.0.1:${port}/a\u0000`,
    `http://127.0.0.1:${port}/a\u007f`,
    `http://127.0.0.1:${port}/a\u0085`,
  ]) {
    const res = await w.api('POST', base, { body: { url, active: false } });
    t.equal(res.status, 422, JSON.stringify(url));
    t.equal(res.body.error?.details?.[0]?.path, '/url', JSON.stringify(url));
  }
  const odd = await w.api('POST', base, { body: { url: `HTTP://127.1:${port}/a/./b/../c?q=é#frag`, active: false } });
  t.equal(odd.status, 201);
  const stored = `http://127.0.0.1:${port}/a/c?q=%C3%A9`;
  t.equal(odd.body.url, stored, 'the record shows the URL requests go to');
  t.equal((await w.api('GET', `${base}/${odd.body.id}`)).body.url, stored);
  const again = await w.api('POST', base, { body: { url: `http://127.0.0.1:${port}/a/c?q=%C3%A9`, active: false } });
  t.equal(again.status, 422, 'the same URL in another spelling is a duplicate');
  const patched = await w.api('PATCH', `${base}/${odd.body.id}`, { body: { url: `http://[::ffff:7f00:1]:${port}/p`, active: true } });
  t.equal(patched.body.url, `http://[::ffff:7f00:1]:${port}/p`, 'IPv6 stays as the parser writes it');
  await waitFor(
    async () => {
      await w.api('POST', `/api/v1/webhooks/${odd.body.id}/ping`);
      return rx.received.length > 0;
    },
    { what: 'a ping to the normalized URL' },
  );
  t.equal(rx.received[0].path, '/p');
});

t.test('content_type "application/json" is another name for "json"', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const created = await w.api('POST', base, { body: { url: `${rx.url}/a`, content_type: 'application/json', active: false } });
  t.equal(created.status, 201);
  t.equal(created.body.content_type, 'json');
  const patched = await w.api('PATCH', `${base}/${created.body.id}`, { body: { content_type: 'application/json' } });
  t.equal(patched.status, 200);
  t.equal(patched.body.content_type, 'json');
  t.equal((await w.api('POST', base, { body: { url: `${rx.url}/b`, content_type: 'form' } })).status, 422, 'form is not offered');
});
