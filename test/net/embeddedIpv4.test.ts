import t from 'tap';
import { Agent, request } from 'undici';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook } from '../delivery/build.ts';
import { policyConnector } from '../../src/net/connector.ts';
import { parseHostPolicy } from '../../src/net/hostPolicy.ts';

/** IPv6 literals carrying 127.0.0.1, 169.254.169.254 (metadata), 10.0.0.1 and 192.168.0.1. */
const hosts = (port: string) => [
  `[::127.0.0.1]:${port}`,
  `[::7f00:1]:${port}`,
  '[::a9fe:a9fe]',
  '[::a00:1]',
  '[::c0a8:1]',
  `[64:ff9b::7f00:1]:${port}`,
  '[2002:a9fe:a9fe::]',
  '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
];

t.test('under `external`, webhooks and imports naming an IPv6 form of an internal IPv4 address are refused (422)', async (t) => {
  const w = await startWharf(t, { workers: [] });
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  for (const host of hosts(new URL(rx.url).port)) {
    const hook = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `http://${host}/x` } });
    t.equal(hook.status, 422, `webhook ${host}`);
    t.equal(hook.body.error?.details?.length, 1, `webhook ${host}`);
    t.match(hook.body.error?.details?.[0], { path: '/url', message: /^is blocked by host policy \(WEBHOOK_ALLOWED_HOSTS\): / }, `webhook ${host}`);
    const imported = await w.api('POST', '/api/v1/repos/import', { body: { source_url: `http://${host}/x.git`, target_org: 'acme', name: 'copy' } });
    t.equal(imported.status, 422, `import ${host}`);
    t.equal(imported.body.error?.details?.[0]?.path, '/source_url', `import ${host}`);
  }
  t.equal(rx.received.length, 0, 'nothing reached the receiver');
});

t.test('the connector refuses an embedded internal address at connect time', async (t) => {
  const rx = await startReceiver(t);
  const port = new URL(rx.url).port;
  const agent = new Agent({ connect: policyConnector(parseHostPolicy(['external'])) });
  t.teardown(() => agent.close());
  for (const host of [`[::127.0.0.1]:${port}`, `[::ffff:127.0.0.1]:${port}`, `[64:ff9b::7f00:1]:${port}`]) {
    await t.rejects(request(`http://${host}/`, { dispatcher: agent, method: 'POST', body: '{}' }), { code: 'EHOSTPOLICY' }, host);
  }
  const open = new Agent({ connect: policyConnector(parseHostPolicy(['loopback'])) });
  t.teardown(() => open.close());
  const answer = await request(`http://[::ffff:127.0.0.1]:${port}/`, { dispatcher: open, method: 'POST', body: '{}' });
  await answer.body.dump();
  t.equal(answer.statusCode, 200, 'the same connector reaches the receiver when the policy allows it');
  t.equal(rx.received.length, 1);
});

t.test('a bare IP in WEBHOOK_ALLOWED_HOSTS allows that address alone', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const port = new URL(rx.url).port;
  const hook = await buildWebhook(w, repo, rx, { url: `http://127.0.0.1:${port}/bare` });
  await waitFor(() => rx.received.length === 1, { what: 'the ping through the listed address' });
  t.equal(rx.received[0].hookId, hook.id);
  t.equal((await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `http://127.0.0.2:${port}/` } })).status, 422, 'a neighbour is not listed');
});

t.test('a bare IP in IMPORT_ALLOWED_HOSTS allows that address alone', async (t) => {
  const w = await startWharf(t, { workers: [], env: { IMPORT_ALLOWED_HOSTS: '127.0.0.1,::1' } });
  await buildRepo(w, 'acme', 'app');
  const post = (source_url: string, name: string) => w.api('POST', '/api/v1/repos/import', { body: { source_url, target_org: 'acme', name } });
  t.equal((await post('http://127.0.0.1:9/x.git', 'a')).status, 202);
  t.equal((await post('http://[::1]:9/x.git', 'b')).status, 202);
  t.equal((await post('http://127.0.0.2:9/x.git', 'c')).status, 422);
});

t.test('under `private`, webhooks and imports naming a cloud metadata address are refused (422); `*` refuses local-use NAT64 forms of it', async (t) => {
  const w = await startWharf(t, { workers: [], env: { WEBHOOK_ALLOWED_HOSTS: 'private', IMPORT_ALLOWED_HOSTS: 'private' } });
  await buildRepo(w, 'acme', 'app');
  for (const host of ['[fd00:ec2::254]', '100.100.100.200', '[::ffff:6464:64c8]', '[64:ff9b:1::a9fe:a9fe]']) {
    const hook = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `http://${host}/x` } });
    t.equal(hook.status, 422, `webhook ${host}`);
    const imported = await w.api('POST', '/api/v1/repos/import', { body: { source_url: `http://${host}/x.git`, target_org: 'acme', name: 'copy' } });
    t.equal(imported.status, 422, `import ${host}`);
  }
  t.equal(
    (await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: 'http://100.100.100.201/x' } })).status,
    201,
    'a neighbour in the same range is private',
  );
  const any = await startWharf(t, { workers: [], env: { WEBHOOK_ALLOWED_HOSTS: '*' } });
  await buildRepo(any, 'acme', 'app');
  for (const host of ['[64:ff9b:1::a9fe:a9fe]', '[fd00:ec2::254]', '100.100.100.200']) {
    t.equal((await any.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `http://${host}/x` } })).status, 422, `webhook ${host} under *`);
  }
});
