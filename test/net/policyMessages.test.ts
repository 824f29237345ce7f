import t, { type Test } from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';

/** The one detail of a 422, or a failure naming what came instead. */
function detail(t: Test, res: { status: number; body: any }, what: string): { path: string; message: string } {
  t.equal(res.status, 422, what);
  t.equal(res.body.error?.details?.length, 1, what);
  return res.body.error?.details?.[0] ?? { path: '', message: '' };
}

t.test('host-policy refusals name the address class and the setting, with the change that allows it', async (t) => {
  const w = await startWharf(t, { workers: [] });
  await buildRepo(w, 'acme', 'app');
  const hook = (url: string) => w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url } });
  const cases: [string, RegExp][] = [
    ['http://127.0.0.1:1/', /127\.0\.0\.1 is a loopback address; .*add loopback: WEBHOOK_ALLOWED_HOSTS=external,loopback/],
    ['http://localhost:1/', /localhost resolves to a loopback address; .*WEBHOOK_ALLOWED_HOSTS=external,loopback/],
    ['http://10.1.2.3/', /10\.1\.2\.3 is a private address; .*add private .*: WEBHOOK_ALLOWED_HOSTS=external,private/],
    ['http://[fd00::1]/', /fd00::1\]? is a private address/],
    ['http://[fe80::1]/', /is a link-local address, allowed only by a CIDR in WEBHOOK_ALLOWED_HOSTS/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address, allowed only by a CIDR in WEBHOOK_ALLOWED_HOSTS/],
    ['http://0.0.0.0/', /0\.0\.0\.0 is an unspecified address .*never allowed/],
    ['http://224.0.0.1/', /is a reserved address .*allowed only by \* or a CIDR in WEBHOOK_ALLOWED_HOSTS/],
  ];
  for (const [url, why] of cases) {
    const d = detail(t, await hook(url), url);
    t.equal(d.path, '/url');
    t.match(d.message, /^is blocked by host policy \(WEBHOOK_ALLOWED_HOSTS\): /, `${url}: the setting`);
    t.match(d.message, why, `${url}: the class and how to allow it`);
  }
  const created = await hook('http://93.184.215.14/hook');
  t.equal(created.status, 201);
  const patched = await w.api('PATCH', `/api/v1/repos/acme/app/webhooks/${created.body.id}`, { body: { url: 'http://127.0.0.1:1/' } });
  t.match(detail(t, patched, 'PATCH'), { path: '/url', message: /loopback address.*WEBHOOK_ALLOWED_HOSTS=external,loopback/ });

  const imported = await w.api('POST', '/api/v1/repos/import', { body: { source_url: 'http://127.0.0.1:1/x.git', target_org: 'acme', name: 'copy' } });
  t.match(detail(t, imported, 'import'), {
    path: '/source_url',
    message:
      /^the source address is blocked by the host policy \(IMPORT_ALLOWED_HOSTS\): 127\.0\.0\.1 is a loopback address; .*IMPORT_ALLOWED_HOSTS=external,loopback/,
  });
  const lfs = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: 'https://93.184.215.14/x.git', lfs_url: 'http://192.168.0.9/lfs', target_org: 'acme', name: 'copy' },
  });
  t.match(detail(t, lfs, 'lfs_url'), { path: '/lfs_url', message: /192\.168\.0\.9 is a private address; .*IMPORT_ALLOWED_HOSTS=external,private/ });
});

t.test('a policy without external says so for a public address', async (t) => {
  const w = await startWharf(t, { workers: [], env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'acme', 'app');
  const res = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: 'http://93.184.215.14/hook' } });
  t.match(detail(t, res, 'public'), {
    path: '/url',
    message: /93\.184\.215\.14 is a public address; to allow public addresses add external: WEBHOOK_ALLOWED_HOSTS=external/,
  });
});
