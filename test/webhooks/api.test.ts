import t from 'tap';
import { startWharf, buildRepo, buildUser } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';

const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback' };

t.test('create, read, update, delete: the record of SPEC §5.1, the secret shown once', async (t) => {
  const w = await startWharf(t, { env });
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const base = '/api/v1/repos/acme/app/webhooks';
  const created = await w.api('POST', base, { body: { url: `${rx.url}/a`, events: ['push', 'issue', 'issue'], branch_filter: 'main' } });
  t.equal(created.status, 201);
  t.equal(created.headers.get('location'), `${base}/${created.body.id}`);
  const secret = created.body.secret;
  t.match(secret, /^whsec_/);
  t.match(created.body, {
    id: Number,
    url: `${rx.url}/a`,
    content_type: 'json',
    events: ['push', 'issue'],
    active: true,
    branch_filter: 'main',
    has_secret: true,
    deliveries_url: `${w.config.baseUrl}/api/v1/webhooks/${created.body.id}/deliveries`,
    ping_url: `${w.config.baseUrl}/api/v1/webhooks/${created.body.id}/ping`,
  });
  t.match(created.body.created_at, /^\d{4}-\d\d-\d\dT/);
  const id = created.body.id;
  await waitFor(() => rx.received.length === 1, { what: 'the creation ping' });

  const given = await w.api('POST', base, { body: { url: `${rx.url}/b`, secret: 'my-own-secret', events: ['*'], active: false } });
  t.equal(given.status, 201);
  t.notOk('secret' in given.body, 'a secret the caller chose is not echoed');
  t.same(given.body.events, ['*']);

  const answers = [
    await w.api('GET', base),
    await w.api('GET', `${base}/${id}`),
    await w.api('PATCH', `${base}/${id}`, { body: { events: ['pipeline'] } }),
    await w.api('PATCH', `${base}/${given.body.id}`, { body: { secret: 'rotated-secret' } }),
    await w.api('GET', `/api/v1/webhooks/${id}/deliveries`),
  ];
  const detail = await w.api('GET', `/api/v1/webhooks/${id}/deliveries/${answers[4].body.deliveries[0].id}`);
  answers.push(detail);
  for (const a of answers) {
    t.equal(a.status, 200);
    t.notOk(
      a.text.includes(secret) || a.text.includes(secret.slice(6)) || a.text.includes('my-own-secret') || a.text.includes('rotated-secret'),
      'no secret after creation',
    );
    t.notOk(a.text.includes('"secret"'));
  }
  t.equal(answers[0].body.length, 2);
  t.match(answers[1].body.last_delivery, { id: Number, result: 'Success', status_code: 200 });
  t.match(answers[2].body, { events: ['pipeline'], url: `${rx.url}/a`, branch_filter: 'main', active: true }, 'PATCH is partial');
  t.ok(answers[2].body.updated_at >= answers[1].body.updated_at);
  const cleared = await w.api('PATCH', `${base}/${id}`, { body: { branch_filter: null } });
  t.equal(cleared.body.branch_filter, null);
  t.notOk(
    w.logs.some((l) => l.includes(secret.slice(6)) || l.includes('my-own-secret') || l.includes('rotated-secret')),
    'no secret in logs',
  );

  t.equal((await w.api('DELETE', `${base}/${id}`)).status, 204);
  t.equal((await w.api('GET', `${base}/${id}`)).status, 404);
  t.equal((await w.api('DELETE', `${base}/${id}`)).status, 404);
  t.equal((await w.api('POST', `/api/v1/webhooks/${id}/ping`)).status, 404);
});

t.test('validation: every bad field named in one 422; 400, 413, 415 before it', async (t) => {
  const w = await startWharf(t, { env });
  await buildRepo(w, 'acme', 'app');
  const base = '/api/v1/repos/acme/app/webhooks';
  const paths = (res: any) => res.body.error.details.map((d: any) => d.path).sort();
  const cases: [unknown, string[]][] = [
    [{}, ['/url']],
    [[], ['/']],
    ['a string', ['/']],
    [
      { url: 5, events: 'push', active: 'yes', content_type: 'form', branch_filter: 7, secret: '' },
      ['/active', '/branch_filter', '/content_type', '/events', '/secret', '/url'],
    ],
    [{ url: 'http://127.0.0.1/x', colour: 'red' }, ['/colour']],
    [{ url: 'http://127.0.0.1/x', events: ['push', 'deploy'] }, ['/events/1']],
    [{ url: 'http://127.0.0.1/x', events: [] }, ['/events']],
    [{ url: '/relative' }, ['/url']],
    [{ url: 'ftp://127.0.0.1/x' }, ['/url']],
    [{ url: 'http://user:pw@127.0.0.1/x' }, ['/url']],
    [{ url: `http://127.0.0.1/${'a'.repeat(2048)}` }, ['/url']],
    [{ url: 'http://127.0.0.1/x', branch_filter: 'main branch' }, ['/branch_filter']],
    [{ url: 'http://127.0.0.1/x', branch_filter: 'a..b' }, ['/branch_filter']],
    [{ url: 'http://127.0.0.1/x', branch_filter: 'release/+(a|b)' }, ['/branch_filter']],
  ];
  for (const [body, expected] of cases) {
    const res = await w.api('POST', base, { body });
    t.equal(res.status, 422, JSON.stringify(body).slice(0, 80));
    t.equal(res.body.error.code, 'validation_failed');
    t.same(paths(res), expected);
  }
  const hook = await w.api('POST', base, { body: { url: 'http://127.0.0.1:9/x', active: false } });
  t.equal(hook.status, 201);
  const patchCases: [unknown, string[]][] = [
    [{ colour: 'red' }, ['/colour']],
    [{ url: null }, ['/url']],
    [{ events: ['*', 'nope'], active: 1 }, ['/active', '/events/1']],
  ];
  for (const [body, expected] of patchCases) {
    const res = await w.api('PATCH', `${base}/${hook.body.id}`, { body });
    t.equal(res.status, 422);
    t.same(paths(res), expected);
  }
  t.equal((await w.api('POST', base, { rawBody: '{"url":', headers: { 'content-type': 'application/json' } })).status, 400);
  t.equal((await w.api('POST', base, { rawBody: 'url=x', headers: { 'content-type': 'text/plain' } })).status, 415);
  const big = await w.api('POST', base, {
    rawBody: JSON.stringify({ url: 'http://127.0.0.1/', secret: 'x'.repeat(1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(big.status, 413);
  t.equal(big.body.error.code, 'payload_too_large');
  t.equal(
    (await w.api('PATCH', `${base}/${hook.body.id}`, { rawBody: 'x'.repeat(1024 * 1024 + 1), headers: { 'content-type': 'application/json' } })).status,
    413,
  );
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.body.id}/ping`, { body: { extra: 1 } })).status, 422, 'ping takes no fields');
  t.equal(
    (await w.api('POST', `/api/v1/webhooks/${hook.body.id}/ping`, { rawBody: 'x'.repeat(1024 * 1024 + 1), headers: { 'content-type': 'application/json' } }))
      .status,
    413,
  );
});

t.test('max_concurrency on repository and organization webhooks: set, read back, changed, cleared to null; 0, 65, 1.5, "2" are 422', async (t) => {
  const w = await startWharf(t, { env });
  await buildRepo(w, 'acme', 'app');
  for (const base of ['/api/v1/repos/acme/app/webhooks', '/api/v1/orgs/acme/webhooks']) {
    const plain = await w.api('POST', base, { body: { url: 'http://127.0.0.1:9/plain', active: false } });
    t.equal(plain.status, 201, base);
    t.equal(plain.body.max_concurrency, null, 'none by default');
    const created = await w.api('POST', base, { body: { url: 'http://127.0.0.1:9/capped', active: false, max_concurrency: 4 } });
    t.equal(created.status, 201);
    t.equal(created.body.max_concurrency, 4);
    const hook = `${base}/${created.body.id}`;
    t.equal((await w.api('GET', hook)).body.max_concurrency, 4, 'read back');
    t.equal((await w.api('GET', base)).body.find((h: any) => h.id === created.body.id).max_concurrency, 4, 'in the list');
    const changed = await w.api('PATCH', hook, { body: { max_concurrency: 64 } });
    t.equal(changed.status, 200);
    t.equal(changed.body.max_concurrency, 64);
    t.equal((await w.api('PATCH', hook, { body: { active: false } })).body.max_concurrency, 64, 'a PATCH without it keeps it');
    t.equal((await w.api('PATCH', hook, { body: { max_concurrency: 1 } })).body.max_concurrency, 1);
    t.equal((await w.api('PATCH', hook, { body: { max_concurrency: null } })).body.max_concurrency, null, 'null: no cap');
    t.equal((await w.api('GET', hook)).body.max_concurrency, null);
    for (const bad of [0, 65, 1.5, '2']) {
      for (const res of [
        await w.api('PATCH', hook, { body: { max_concurrency: bad } }),
        await w.api('POST', base, { body: { url: 'http://127.0.0.1:9/bad', max_concurrency: bad } }),
      ]) {
        t.equal(res.status, 422, `${JSON.stringify(bad)} refused`);
        t.equal(res.body.error.code, 'validation_failed');
        t.same(
          res.body.error.details.map((d: any) => d.path),
          ['/max_concurrency'],
        );
      }
    }
    t.equal((await w.api('GET', hook)).body.max_concurrency, null, 'a refused PATCH changes nothing');
  }
});

t.test('20 per repository, one per URL', async (t) => {
  const w = await startWharf(t, { env });
  await buildRepo(w, 'acme', 'app');
  await buildRepo(w, 'acme', 'other');
  const base = '/api/v1/repos/acme/app/webhooks';
  for (let i = 0; i < 20; i++) t.equal((await w.api('POST', base, { body: { url: `http://127.0.0.1:9/${i}`, active: false } })).status, 201);
  const extra = await w.api('POST', base, { body: { url: 'http://127.0.0.1:9/20', active: false } });
  t.equal(extra.status, 422, 'the 21st is refused');
  t.equal(extra.body.error.code, 'validation_failed');
  const list = await w.api('GET', base);
  t.equal(list.body.length, 20);
  t.equal((await w.api('DELETE', `${base}/${list.body[0].id}`)).status, 204);
  const dup = await w.api('POST', base, { body: { url: 'http://127.0.0.1:9/5', active: false } });
  t.equal(dup.status, 422, 'same URL twice');
  t.same(
    dup.body.error.details.map((d: any) => d.path),
    ['/url'],
  );
  const patchDup = await w.api('PATCH', `${base}/${list.body[1].id}`, { body: { url: 'http://127.0.0.1:9/5' } });
  t.equal(patchDup.status, 422, 'PATCH to an existing URL');
  t.equal(
    (await w.api('POST', '/api/v1/repos/acme/other/webhooks', { body: { url: 'http://127.0.0.1:9/5', active: false } })).status,
    201,
    'another repository may use it',
  );
});

t.test('401 without a token, 403 for a non-owner, 404 for what cannot be seen or does not exist', async (t) => {
  const w = await startWharf(t, { env });
  await buildRepo(w, 'acme', 'app', 'private');
  await buildRepo(w, 'acme', 'open', 'public');
  const member = await buildUser(w, 'mia', { org: 'acme', role: 'member' });
  const outsider = await buildUser(w, 'olaf');
  const hook = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: 'http://127.0.0.1:9/x', active: false } });
  const openHook = await w.api('POST', '/api/v1/repos/acme/open/webhooks', { body: { url: 'http://127.0.0.1:9/x', active: false } });
  const ping = await w.api('POST', `/api/v1/webhooks/${hook.body.id}/ping`);
  t.equal(ping.status, 202, 'ping works on an inactive webhook');
  t.match(ping.body, { event: 'ping', status: 'pending', webhook_id: hook.body.id, redelivery: false });
  const id = hook.body.id;
  const d = ping.body.id;
  const routes: [string, string, unknown?][] = [
    ['GET', '/api/v1/repos/acme/app/webhooks'],
    ['POST', '/api/v1/repos/acme/app/webhooks', { url: 'http://127.0.0.1:9/y' }],
    ['GET', `/api/v1/repos/acme/app/webhooks/${id}`],
    ['PATCH', `/api/v1/repos/acme/app/webhooks/${id}`, { active: true }],
    ['DELETE', `/api/v1/repos/acme/app/webhooks/${id}`],
    ['POST', `/api/v1/webhooks/${id}/ping`],
    ['GET', `/api/v1/webhooks/${id}/deliveries`],
    ['GET', `/api/v1/webhooks/${id}/deliveries/${d}`],
    ['POST', `/api/v1/webhooks/${id}/deliveries/${d}/retry`],
  ];
  for (const [method, path, body] of routes) {
    const anon = await w.api(method, path, { token: null, body });
    t.equal(anon.status, 401, `${method} ${path} without a token`);
    t.equal(anon.body.error.code, 'unauthorized');
    t.equal((await w.api(method, path, { token: 'wharf_not-a-real-token', body })).status, 401);
    const m = await w.api(method, path, { token: member.token, body });
    t.equal(m.status, 403, `${method} ${path} as a member`);
    t.equal(m.body.error.code, 'forbidden');
    const o = await w.api(method, path, { token: outsider.token, body });
    t.equal(o.status, 404, `${method} ${path} as an outsider to a private repository`);
    t.ok(o.headers.get('x-request-id'));
  }
  t.equal(
    (await w.api('GET', `/api/v1/webhooks/${openHook.body.id}/deliveries`, { token: outsider.token })).status,
    403,
    'public repository: visible, not owned',
  );
  const unknown: [string, string][] = [
    ['GET', '/api/v1/repos/acme/app/webhooks/999999'],
    ['GET', '/api/v1/repos/acme/app/webhooks/abc'],
    ['GET', `/api/v1/repos/acme/open/webhooks/${id}`],
    ['PATCH', '/api/v1/repos/acme/app/webhooks/999999'],
    ['DELETE', `/api/v1/repos/acme/open/webhooks/${id}`],
    ['GET', '/api/v1/repos/acme/nope/webhooks'],
    ['POST', '/api/v1/webhooks/999999/ping'],
    ['GET', '/api/v1/webhooks/0/deliveries'],
    ['GET', `/api/v1/webhooks/${id}/deliveries/999999`],
    ['GET', `/api/v1/webhooks/${openHook.body.id}/deliveries/${d}`],
    ['POST', `/api/v1/webhooks/${id}/deliveries/999999/retry`],
    ['POST', `/api/v1/webhooks/${id}/deliveries/x/retry`],
  ];
  for (const [method, path] of unknown) {
    const res = await w.api(method, path, { body: method === 'PATCH' ? { active: true } : undefined });
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.error.code, 'not_found');
  }
});

t.test('delivery list: counts, newest first, status filter, cursor pages; bad query values are 422', async (t) => {
  const w = await startWharf(t, { env: { ...env, WEBHOOK_RETRY_SCHEDULE: '0s' } });
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, (_r, i) => ({ status: i % 2 === 0 ? 200 : 500 }));
  const hook = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `${rx.url}/x`, active: false } });
  const ids: number[] = [];
  for (let i = 0; i < 7; i++) ids.push((await w.api('POST', `/api/v1/webhooks/${hook.body.id}/ping`)).body.id);
  await waitFor(() => rx.received.length === 7, { what: '7 pings' });
  const base = `/api/v1/webhooks/${hook.body.id}/deliveries`;
  const all = await waitFor(
    async () => {
      const res = await w.api('GET', base);
      return res.body.pending === 0 ? res.body : null;
    },
    { what: 'all finished' },
  );
  t.equal(all.total, 7);
  t.equal(all.successful, rx.received.filter((_r, i) => i % 2 === 0).length, 'successful count matches what the receiver answered 200 to');
  t.equal(all.failed + all.successful, 7);
  t.same(
    all.deliveries.map((d: any) => d.id),
    [...ids].reverse(),
    'newest first',
  );
  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: any = await w.api('GET', `${base}?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    t.ok(res.body.deliveries.length <= 3);
    seen.push(...res.body.deliveries.map((d: any) => d.id));
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor);
  t.equal(pages, 3);
  t.same(seen, [...ids].reverse(), 'pages cover everything once');
  const failed = await w.api('GET', `${base}?status=failed`);
  t.equal(failed.body.deliveries.length, all.failed);
  t.ok(failed.body.deliveries.every((d: any) => d.status === 'failed' && d.result === 'Failed' && d.status_code === 500));
  const ok = await w.api('GET', `${base}?status=success&limit=100`);
  t.ok(ok.body.deliveries.every((d: any) => d.result === 'Success'));
  for (const [query, expected] of [
    ['limit=0', ['/limit']],
    ['limit=101', ['/limit']],
    ['limit=ten', ['/limit']],
    ['status=done', ['/status']],
    ['cursor=!!!', ['/cursor']],
    ['cursor=ZXg', ['/cursor']],
    ['limit=-1&status=x&cursor=zzz', ['/cursor', '/limit', '/status']],
  ] as [string, string[]][]) {
    const res = await w.api('GET', `${base}?${query}`);
    t.equal(res.status, 422, query);
    t.same(res.body.error.details.map((d: any) => d.path).sort(), expected);
  }
  const metrics = await fetch(`${w.url}/metrics`);
  t.equal(metrics.status, 200);
  const text = await metrics.text();
  t.match(text, `wharf_deliveries{result="success"} ${all.successful}`);
  t.match(text, /wharf_delivery_attempt_seconds_count \d+/);
  t.match(text, /wharf_delivery_queue_depth \d+/);
  t.match(text, /wharf_http_requests_total\{method="GET",route="\/api\/v1\/webhooks\/:id\/deliveries",status="200"\} \d+/);
  t.match(text, /wharf_http_requests_total\{method="GET",route="\/api\/v1\/webhooks\/:id\/deliveries",status="422"\} 7/);
});
