import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { buildWebhook, raise } from '../delivery/build.ts';
import { waitFor } from '../helpers/wait.ts';

// Custom webhook headers (SPEC §5.2): sent on every attempt, sealed at rest, never shown.

const AUTH = 'Bearer custom-header-value-7f3a9c';
const TOKEN = 'token-value-e21b44';
const OTHER = 'other-value-5d8e10';
// One retry, a second after the first failure.
const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s,1s' };

t.test('custom headers arrive on every attempt, pings and redeliveries, and are never shown', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  // The first attempt of the push fails, so it is retried.
  const rx = await startReceiver(t, (r) => (r.event === 'push' && r.attempt === 1 ? { status: 500 } : {}));
  const base = `/api/v1/repos/acme/app/webhooks`;
  const hook = await buildWebhook(w, repo, rx, { headers: { Authorization: AUTH, 'X-Token': TOKEN } });
  t.same(hook.headers, { Authorization: '********', 'X-Token': '********' }, 'created: names shown, values masked');
  const plain = await buildWebhook(w, repo, { url: `${rx.url}/plain`, secrets: rx.secrets }, {});
  t.same(plain.headers, {}, 'none: {}');

  await raise(w, repo, [{ type: 'push' }]);
  await waitFor(() => rx.received.some((r) => r.hookId === hook.id && r.event === 'push' && r.attempt === 2), { what: 'the retry' });
  const list = await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`);
  const push = list.body.deliveries.find((d: any) => d.event === 'push');
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/deliveries/${push.id}/retry`)).status, 202, 'redelivered');
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`)).status, 202, 'pinged');
  const mine = () => rx.received.filter((r) => r.hookId === hook.id);
  await waitFor(() => mine().length === 5, { what: 'ping, two push attempts, a redelivery and a ping' });

  const seen = mine().map((r) => `${r.event}#${r.attempt}`);
  t.same(seen.sort(), ['ping#1', 'ping#1', 'push#1', 'push#1', 'push#2'], 'the first attempt, a retry, a redelivery and pings');
  for (const r of mine()) {
    t.equal(r.headers.authorization, AUTH, `${r.event} #${r.attempt}: Authorization arrives`);
    t.equal(r.headers['x-token'], TOKEN, `${r.event} #${r.attempt}: X-Token arrives`);
    t.ok(r.signatureOk, 'Wharf’s own headers are intact');
    t.equal(r.headers['content-type'], 'application/json');
  }
  for (const r of rx.received.filter((r) => r.hookId === plain.id)) t.notOk('x-token' in r.headers, 'another webhook’s headers stay its own');

  // Never returned: records, lists, the delivery detail's request headers.
  const answers = [
    await w.api('GET', base),
    await w.api('GET', `${base}/${hook.id}`),
    await w.api('PATCH', `${base}/${hook.id}`, { body: { active: true } }),
    await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`),
  ];
  const details = [];
  for (const d of (await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries) {
    details.push(await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries/${d.id}`));
  }
  for (const a of [...answers, ...details]) {
    t.equal(a.status, 200);
    t.notOk(a.text.includes(AUTH.slice(7)) || a.text.includes(TOKEN), `${a.text.slice(0, 40)}…: no custom header value`);
  }
  t.same(answers[1].body.headers, { Authorization: '********', 'X-Token': '********' });
  for (const d of details) {
    t.equal(d.body.request.headers.Authorization, '********', 'the recorded request masks the value');
    t.equal(d.body.request.headers['X-Token'], '********');
  }
  const logs = w.logs.join('');
  t.notOk(logs.includes(AUTH.slice(7)) || logs.includes(TOKEN), 'not in the server log');

  // Sealed at rest: the names in the clear, the values nowhere.
  const row = await w.running.services.db('webhooks').where('id', hook.id).first();
  t.match(row.headers, /^v1:/, 'sealed');
  t.notOk(row.headers.includes(TOKEN) || row.headers.includes(AUTH.slice(7)));
  t.same(JSON.parse(row.header_names), ['Authorization', 'X-Token']);
  const attempts = await w.running.services.db('delivery_attempts').select('*');
  t.notOk(JSON.stringify(attempts).includes(TOKEN), 'the stored attempts hold no value');

  // PATCH replaces the whole set; {} clears it.
  const replaced = await w.api('PATCH', `${base}/${hook.id}`, { body: { headers: { 'X-Other': OTHER } } });
  t.same(replaced.body.headers, { 'X-Other': '********' }, 'replaced');
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`)).status, 202);
  await waitFor(() => mine().length === 6, { what: 'a ping with the new set' });
  const last = mine()[5];
  t.equal(last.headers['x-other'], OTHER, 'the new header arrives');
  t.notOk('authorization' in last.headers || 'x-token' in last.headers, 'the old ones are gone');
  const cleared = await w.api('PATCH', `${base}/${hook.id}`, { body: { headers: {} } });
  t.same(cleared.body.headers, {}, 'cleared');
  t.equal((await w.running.services.db('webhooks').where('id', hook.id).first()).headers, null);
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`)).status, 202);
  await waitFor(() => mine().length === 7, { what: 'a ping without custom headers' });
  t.notOk('x-other' in mine()[6].headers, 'none sent after clearing');
});

t.test('reserved and bad custom headers are 422 on create and PATCH and change nothing', async (t) => {
  const w = await startWharf(t, { env });
  await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const base = `/api/v1/repos/acme/app/webhooks`;
  const made = await w.api('POST', base, { body: { url: `${rx.url}/hook`, headers: { 'X-Keep': 'kept' } } });
  t.equal(made.status, 201);
  const id = made.body.id;
  const db = w.running.services.db;
  const before = await db('webhooks').where('id', id).first();
  const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v']));
  const bad: [string, unknown][] = [
    ['Content-Type', { 'Content-Type': 'text/plain' }],
    ['content-type lowercase', { 'content-type': 'text/plain' }],
    ['User-Agent', { 'USER-AGENT': 'x' }],
    ['Host', { Host: 'example.com' }],
    ['Content-Length', { 'Content-Length': '1' }],
    ['Connection', { connection: 'close' }],
    ['Transfer-Encoding', { 'Transfer-Encoding': 'chunked' }],
    ['Keep-Alive', { 'Keep-Alive': 'timeout=5' }],
    ['Upgrade', { Upgrade: 'websocket' }],
    ['Expect', { Expect: '100-continue' }],
    ['TE', { TE: 'trailers' }],
    ['X-Service-*', { 'X-Service-Signature': 'sha256=0' }],
    ['x-service-* any case', { 'x-SERVICE-event': 'push' }],
    ['X-GitHub-*', { 'X-GitHub-Event': 'push' }],
    ['X-Hub-*', { 'x-hub-signature': 'sha1=0' }],
    ['webhook-*', { 'Webhook-Signature': 'v1,x' }],
    ['duplicate names by case', { 'X-Dup': 'a', 'x-dup': 'b' }],
    ['name not a token', { 'X Bad': 'v' }],
    ['name with a colon', { 'X-Bad:': 'v' }],
    ['name too long', { [`X-${'a'.repeat(63)}`]: 'v' }],
    ['empty name', { '': 'v' }],
    ['value with CR LF', { 'X-Bad': 'a\r\nX-Injected: 1' }],
    ['value with LF', { 'X-Bad': 'a\nb' }],
    ['value with NUL', { 'X-Bad': 'a\u0000b' }],
    ['value not ASCII', { 'X-Bad': 'é' }],
    ['empty value', { 'X-Bad': '' }],
    ['value too long', { 'X-Bad': 'v'.repeat(1025) }],
    ['value not a string', { 'X-Bad': 1 }],
    ['11 headers', eleven],
    ['an array', [['X-A', 'v']]],
    ['a string', 'X-A: v'],
    ['null', null],
  ];
  const count = async () => Number((await db('webhooks').count({ n: '*' }))[0].n);
  const hooks = await count();
  for (const [what, headers] of bad) {
    const created = await w.api('POST', base, { body: { url: `${rx.url}/other`, headers } });
    t.equal(created.status, 422, `create, ${what}: 422`);
    t.equal(created.body?.error?.code, 'validation_failed');
    t.notOk(created.text.includes('Injected') || created.text.includes('timeout=5'), 'the value is not echoed');
    const patched = await w.api('PATCH', `${base}/${id}`, { body: { headers } });
    t.equal(patched.status, 422, `PATCH, ${what}: 422`);
  }
  t.equal(await count(), hooks, 'nothing created');
  t.same(await db('webhooks').where('id', id).first(), before, 'nothing changed');
  // At the limits: 10 headers, a 64-character name, a 1,024-character value with spaces and tabs inside.
  const ten = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`X-H${i}`, 'v']));
  const atLimit = { ...ten, [`X-${'a'.repeat(62)}`]: `a \t${'v'.repeat(1020)}b` };
  const ok = await w.api('PATCH', `${base}/${id}`, { body: { headers: atLimit } });
  t.equal(ok.status, 200, 'the limits themselves are accepted');
  t.equal(Object.keys(ok.body.headers).length, 10);
});
