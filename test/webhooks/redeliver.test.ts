import t from 'tap';
import { startWharf, buildRepo, buildUser } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { buildWebhook, raise } from '../delivery/build.ts';
import { clockPast, deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { redeliverFailed } from '../../src/webhooks/history.ts';

// One attempt per delivery, so a receiver answering 503 leaves them `failed` at once.
const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s' };

t.test('bulk redelivery: every failed delivery of the window once, same guid and bytes; a second call sends nothing new', async (t) => {
  const w = await startWharf(t, { env });
  const db = w.running.services.db;
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, () => ({ status: 503 }));
  const hook = await buildWebhook(w, repo, rx, { events: ['push'], secret: 'redeliver-secret' });
  const path = `/api/v1/webhooks/${hook.id}/deliveries/redeliver`;

  // Before the window: the creation ping and two pushes, all failed.
  await raise(w, repo, [{ n: 2 }]);
  const before = await deliveriesSettled(db, { webhookId: hook.id, count: 3 });
  t.ok(before.every((d) => d.status === 'failed'));
  const finished = async () => Math.max(...(await db('deliveries').where('webhook_id', hook.id).pluck('finished_at')).map(Number));
  await clockPast(await finished());
  const since = new Date().toISOString();

  await raise(w, repo, [{ n: 5 }]);
  const all = await deliveriesSettled(db, { webhookId: hook.id, count: 8 });
  const inWindow = all.filter((d) => !before.some((b) => b.id === d.id));
  t.equal(inWindow.length, 5);
  t.ok(
    inWindow.every((d) => d.status === 'failed'),
    'five failed deliveries in the window',
  );
  const firstBodies = new Map(rx.received.map((r) => [r.guid, r.body]));

  rx.answer(() => ({ status: 200 }));
  const first = await w.api('POST', path, { body: { since, status: 'failed' } });
  t.equal(first.status, 202);
  t.same(first.body, { redelivered: 5, remaining: 0 });
  const settled = await deliveriesSettled(db, { webhookId: hook.id, count: 13 });
  const copies = settled.filter((d) => d.id > Math.max(...all.map((a) => a.id)));
  t.equal(copies.length, 5);
  t.ok(
    copies.every((d) => d.status === 'success'),
    'the redeliveries succeed at the fixed receiver',
  );
  t.same(copies.map((c) => c.guid).sort(), inWindow.map((d) => d.guid).sort(), 'same guids as the failed ones');
  const resent = rx.received.filter((r) => r.attempt === 1 && rx.received.indexOf(r) >= 8);
  t.equal(resent.length, 5, 'the receiver got five');
  for (const r of resent) {
    t.ok(inWindow.some((d) => d.guid === r.guid));
    t.ok(r.body.equals(firstBodies.get(r.guid)!), 'the same bytes');
    t.ok(r.signatureOk, 'signed');
  }
  const listed = await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=100`);
  for (const d of listed.body.deliveries.filter((x: any) => copies.some((c) => c.id === x.id))) {
    t.equal(d.redelivery, true);
    t.ok(
      inWindow.some((o) => o.id === d.redelivery_of && o.guid === d.guid),
      'redelivery_of the failed one',
    );
  }

  const again = await w.api('POST', path, { body: { since } });
  t.same([again.status, again.body], [202, { redelivered: 0, remaining: 0 }], 'a second call redelivers nothing');
  const outside = await db('deliveries').whereIn(
    'guid',
    before.map((b) => b.guid),
  );
  t.equal(outside.length, 3, 'deliveries before the window are untouched');

  // An earlier window with an end: only the three before `since`; with a cap of 2, one remains.
  const until = new Date(Date.parse(since) - 1).toISOString();
  rx.answer(() => ({ status: 503 }));
  const capped = await redeliverFailed(w.running.services, hook.id, { since: 0, until: Date.parse(until) }, 2);
  t.same(capped, { redelivered: 2, remaining: 1 }, 'the cap, and what remains');
  const rest = await w.api('POST', path, { body: { since: '2000-01-01T00:00:00Z', until } });
  t.same([rest.status, rest.body], [202, { redelivered: 1, remaining: 0 }]);
  await deliveriesSettled(db, { webhookId: hook.id, count: 16 });
  // The three failed again: their redeliveries are the ones taken now, once.
  const third = await w.api('POST', path, { body: { since: '2000-01-01T00:00:00+00:00' } });
  t.same(third.body, { redelivered: 3, remaining: 0 }, 'a failed redelivery is taken again, its original not');
  await waitFor(async () => (await deliveriesSettled(db, { webhookId: hook.id, count: 19 })).length === 19);
});

t.test('bulk redelivery: bad input is a 422, other users as for the other webhook routes', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const hook = await buildWebhook(w, repo, rx);
  const path = `/api/v1/webhooks/${hook.id}/deliveries/redeliver`;
  const bad: [unknown, string][] = [
    [{}, '/since'],
    [{ since: 'yesterday' }, '/since'],
    [{ since: '24h' }, '/since'],
    [{ since: '2026-13-01T00:00:00Z' }, '/since'],
    [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, '/until'],
    [{ since: '2026-01-01T00:00:00Z', until: 5 }, '/until'],
    [{ since: '2026-01-01T00:00:00Z', status: 'success' }, '/status'],
    [{ since: '2026-01-01T00:00:00Z', extra: true }, '/'],
    [[], '/'],
  ];
  for (const [body, where] of bad) {
    const res = await w.api('POST', path, { body });
    t.equal(res.status, 422, JSON.stringify(body));
    t.equal(res.body.error.code, 'validation_failed');
    t.ok(
      res.body.error.details.some((d: any) => d.path === where || (where === '/' && d.path.startsWith('/'))),
      `${JSON.stringify(body)}: names ${where}`,
    );
  }
  const ok = { since: '2026-01-01T00:00:00Z' };
  const stranger = await buildUser(w, 'eve', { org: 'other', role: 'owner' });
  const member = await buildUser(w, 'bob', { org: 'acme', role: 'member' });
  for (const who of [stranger, member]) {
    const list = await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: who.token });
    const res = await w.api('POST', path, { token: who.token, body: ok });
    t.ok([403, 404].includes(res.status), `${who.user.login}: ${res.status}`);
    t.equal(res.status, list.status, `${who.user.login}: as for the delivery list`);
  }
  t.equal((await w.api('POST', path, { token: null, body: ok })).status, 401);
  t.equal((await w.api('POST', '/api/v1/webhooks/999999/deliveries/redeliver', { body: ok })).status, 404);
  t.same((await w.api('POST', path, { body: ok })).body, { redelivered: 0, remaining: 0 });
  for (const edge of [
    { since: '0000-01-01T00:00:00Z', until: '9999-12-31T23:59:59.999999999Z', status: 'failed' },
    { since: '2026-01-01T00:00:00+14:00', until: '2026-01-01T00:00:00-12:00' },
    { since: '9999-12-31T23:59:59Z' },
  ]) {
    const res = await w.api('POST', path, { body: edge });
    t.same([res.status, res.body], [202, { redelivered: 0, remaining: 0 }], `extreme times: ${JSON.stringify(edge)}`);
  }
  const nul = await w.api('POST', path, { body: { since: '2026-01-01T00:00:00Z\u0000' } });
  t.equal(nul.status, 422, 'a NUL byte');
});
