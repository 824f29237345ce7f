import t from 'tap';
import type { Test } from 'tap';
import { startWharf, buildRepo, type TestWharf } from '../helpers/wharf.ts';
import { startReceiver, type Received } from '../delivery/receiver.ts';
import { allDeliveries, attemptStarts, buildWebhook, raise } from '../delivery/build.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { retryAfterAt } from '../../src/delivery/attempt/http/retryAfter.ts';

// Endpoint health (SPEC §5.5) and pacing (§5.2 max_rate) through a real server and a real
// receiver: pause after failures in a row, held deliveries that spend no attempt, probes
// that back off and resume, 410 Gone, Retry-After for the whole webhook, deactivation
// after WEBHOOK_DISABLE_AFTER, and max_rate.

const base = { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_TIMEOUT: '2s' };

const hookApi = (w: TestWharf, hook: { id: number }) => `/api/v1/repos/acme/app/webhooks/${hook.id}`;
const getHook = async (w: TestWharf, hook: { id: number }) => (await w.api('GET', hookApi(w, hook))).body;
const pushes = (rx: { received: Received[] }) => rx.received.filter((r) => r.event === 'push');

/** A receiver that answers 500 while `state.down`, else `state.answer` (200 by default); pings always succeed. */
async function switchable(t: Test) {
  const state: { down: boolean; status: number; headers?: Record<string, string> } = { down: false, status: 200 };
  const rx = await startReceiver(t, (r) =>
    r.event === 'ping' ? {} : state.down ? { status: 500, body: 'down' } : { status: state.status, headers: state.headers },
  );
  return { rx, state };
}

async function setup(t: Test, env: Record<string, string>, hookBody: Record<string, unknown> = {}) {
  const w = await startWharf(t, { env: { ...base, ...env } });
  const repo = await buildRepo(w, 'acme', 'app');
  const { rx, state } = await switchable(t);
  const hook = await buildWebhook(w, repo, rx, hookBody);
  await waitFor(() => rx.received.some((r) => r.event === 'ping'), { what: 'the creation ping' });
  return { w, repo, rx, state, hook };
}

t.test(
  'failures in a row pause the webhook; held deliveries spend nothing; a failed probe backs off; the first 2xx resumes them from attempt 1, in order',
  async (t) => {
    const { w, repo, rx, state, hook } = await setup(t, {
      WEBHOOK_PAUSE_AFTER: '3',
      WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms,200ms,200ms',
      WEBHOOK_PROBE_AFTER: '1s',
    });
    t.same((await getHook(w, hook)).health, { state: 'healthy' }, 'a new webhook is healthy');
    state.down = true;
    await raise(w, repo, [{ type: 'push' }]);
    const paused = await waitFor(
      async () => {
        const h = await getHook(w, hook);
        return h.health.state === 'paused' ? h : null;
      },
      { what: 'the webhook to pause' },
    );
    t.equal(pushes(rx).length, 3, 'paused after 3 failed attempts in a row');
    t.match(paused.health, { state: 'paused', reason: '500 Internal Server Error', held: 1 });
    t.ok(Date.parse(paused.health.next_probe_at) > Date.parse(paused.health.since), 'the next probe is after the pause');
    t.equal(paused.active, true, 'a paused webhook stays active');
    t.match(w.logs.join(''), /webhook paused after 3 failed attempts in a row/);
    const metrics = await (await fetch(`${w.url}/metrics`)).text();
    t.match(metrics, /wharf_webhook_health\{state="paused"\} 1/);
    t.match(metrics, /wharf_webhook_held_deliveries 1/);

    // Three new events while paused: created, held, not sent.
    await raise(w, repo, [{ type: 'push', n: 3 }]);
    const { counts } = await allDeliveries(w, hook.id);
    t.equal(counts.pending, 4, 'the new deliveries are created (pending)');
    t.equal((await getHook(w, hook)).health.held, 4, '… and held');

    // The first probe (the oldest held delivery's next attempt, its 4th) fails: the next waits twice as long.
    await waitFor(() => pushes(rx).length === 4, { what: 'the first probe' });
    const probe = pushes(rx)[3];
    t.equal(probe.attempt, 4, "the probe is the oldest held delivery's next attempt");
    t.equal(probe.guid, pushes(rx)[0].guid);
    // The back-off and the probed delivery's return to the held ones are two writes: wait for both.
    const backedOff = await waitFor(
      async () => {
        const h = await getHook(w, hook);
        return h.health.next_probe_at && Date.parse(h.health.next_probe_at) > probe.at + 1500 && h.health.held === 4 ? h : null;
      },
      { what: 'the probe to back off and its delivery to be held again' },
    );
    t.equal(backedOff.health.state, 'paused');
    t.equal(backedOff.health.held, 4, 'the probed delivery is held again');
    t.ok(Date.parse(backedOff.health.next_probe_at) - probe.at >= 1900, 'the second probe waits about twice the first interval');
    t.equal(pushes(rx).length, 4, 'nothing else was sent while paused');

    state.down = false;
    await deliveriesSettled(w.running.services.db, {}, { what: 'every held delivery to be delivered' });
    const sent = pushes(rx);
    t.equal(sent.length, 8, 'one more attempt of the probed delivery, one of each held one');
    t.same(
      sent.slice(4).map((r) => r.attempt),
      [5, 1, 1, 1],
      'the probe resumes the webhook with its 5th attempt; the held deliveries go out as attempt 1',
    );
    const { deliveries } = await allDeliveries(w, hook.id);
    const created = deliveries
      .filter((d: any) => d.event === 'push')
      .sort((a: any, b: any) => a.id - b.id)
      .map((d: any) => d.guid);
    t.same(
      sent.slice(5).map((r) => r.guid),
      created.slice(1),
      'in the order they were created',
    );
    t.ok(
      deliveries.every((d: any) => d.status === 'success'),
      'every delivery succeeded',
    );
    t.same((await getHook(w, hook)).health, { state: 'healthy' }, 'healthy again');
    t.match(w.logs.join(''), /webhook resumed: a probe succeeded; 3 held deliveries released/);
  },
);

t.test('a 410 Gone deactivates the webhook at once and holds the rest; active: true releases them', async (t) => {
  const { w, repo, rx, state, hook } = await setup(t, { WEBHOOK_CONCURRENCY: '1', WEBHOOK_RETRY_SCHEDULE: '0s,200ms' });
  state.status = 410;
  await raise(w, repo, [{ type: 'push', n: 3 }]);
  const disabled = await waitFor(
    async () => {
      const h = await getHook(w, hook);
      return h.health.state === 'disabled' && h.health.held === 2 ? h : null;
    },
    { what: 'the webhook to be disabled with 2 held' },
  );
  t.match(disabled, { active: false, health: { state: 'disabled', reason: '410 Gone', held: 2, next_probe_at: null } });
  t.equal(pushes(rx).length, 1, 'one attempt got the 410; the others were never sent');
  const gone = (await allDeliveries(w, hook.id)).deliveries.find((d: any) => d.status_code === 410);
  t.match(gone, { status: 'failed', attempts: 1 }, 'the delivery that got the 410 is not retried');
  t.match(w.logs.join(''), /webhook disabled: its receiver answered 410 Gone/);

  // Events while it is disabled by Wharf still make deliveries, held: its owner's reactivation loses nothing.
  await raise(w, repo, [{ type: 'push', n: 2 }]);
  t.match((await getHook(w, hook)).health, { state: 'disabled', held: 4 }, 'two more deliveries, held');
  t.equal(pushes(rx).length, 1, 'none of them sent');
  state.status = 200;
  const res = await w.api('PATCH', hookApi(w, hook), { body: { active: true } });
  t.equal(res.status, 200);
  t.match(res.body, { active: true, health: { state: 'healthy' } });
  await deliveriesSettled(w.running.services.db, {}, { what: 'the held deliveries' });
  const sent = pushes(rx).slice(1);
  t.same(
    sent.map((r) => [r.attempt, r.signatureOk]),
    [
      [1, true],
      [1, true],
      [1, true],
      [1, true],
    ],
    'released and sent as attempt 1, those raised while disabled included',
  );
  const created = (await allDeliveries(w, hook.id)).deliveries
    .filter((d: any) => d.event === 'push' && d.status_code !== 410)
    .sort((a: any, b: any) => a.id - b.id)
    .map((d: any) => d.guid);
  t.same(
    sent.map((r) => r.guid),
    created,
    'in the order they were created',
  );
  t.match(w.logs.join(''), /webhook resumed by its owner; 4 held deliveries released/);

  // Deactivated by its owner, the webhook makes no delivery for new events (as on GitHub and Gitea).
  t.equal((await w.api('PATCH', hookApi(w, hook), { body: { active: false } })).body.health.state, 'healthy');
  const before = (await allDeliveries(w, hook.id)).deliveries.length;
  await raise(w, repo, [{ type: 'push' }]);
  t.equal((await allDeliveries(w, hook.id)).deliveries.length, before, 'no delivery for an event after an owner deactivated it');
});

t.test("a 503 with Retry-After puts the webhook's next attempts, of every delivery, no earlier than that", async (t) => {
  const { w, repo, rx, state, hook } = await setup(t, { WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms' });
  state.status = 503;
  state.headers = { 'retry-after': '4' };
  await raise(w, repo, [{ type: 'push' }]);
  // The 503 is recorded (the webhook holds its Retry-After) before the next event happens.
  await waitFor(async () => (await w.running.services.db('webhooks').where('id', hook.id).first('not_before')).not_before != null, {
    what: 'the Retry-After to be recorded',
  });
  state.status = 200;
  state.headers = undefined;
  const first = pushes(rx)[0];
  await raise(w, repo, [{ type: 'push' }]);
  await deliveriesSettled(w.running.services.db, {}, { what: 'both deliveries' });
  const [, second, third] = pushes(rx);
  t.equal(second.guid, first.guid);
  t.equal(second.attempt, 2, 'the wait used no attempt');
  t.ok(second.at - first.at >= 4000, `the retry came ${second.at - first.at} ms later (at least 4 s)`);
  t.equal(third.attempt, 1);
  t.ok(third.at - first.at >= 4000, "another delivery's attempt waited too");
  const { deliveries } = await allDeliveries(w, hook.id);
  t.ok(deliveries.every((d: any) => d.status === 'success'));
});

t.test('max_rate paces a webhook: deliveries over it wait, none fails, no attempt spent', async (t) => {
  const { w, repo, rx, hook } = await setup(t, {}, { max_rate: 5 });
  t.equal(hook.max_rate, 5);
  const [{ id: lastBefore }] = await w.running.services.db('deliveries').max({ id: 'id' });
  await raise(w, repo, [{ type: 'push', n: 20 }]);
  await deliveriesSettled(w.running.services.db, {}, { what: '20 paced deliveries' });
  const sent = pushes(rx);
  t.equal(sent.length, 20, 'each sent once');
  t.ok(
    sent.every((r) => r.attempt === 1),
    'every one as attempt 1',
  );
  // What the pace governs: when the attempts start (each within a quarter of a slot of its
  // slot, 200 ms apart); what the receiver sees: the arrivals, which the way from the
  // server's event loop to the receiver's (on a loaded machine, tens of ms) may bring closer.
  const started = await attemptStarts(w.running.services.db, hook.id, Number(lastBefore));
  t.equal(started.length, 20, 'one attempt each');
  t.ok(started[19] - started[0] >= 3750, `20 attempts at 5 a second took ${started[19] - started[0]} ms to start (3.8 s of slots)`);
  for (let i = 5; i < started.length; i++)
    t.ok(started[i] - started[i - 5] >= 940, `no more than 5 attempts started in any second (${i}): ${started[i] - started[i - 5]} ms`);
  for (let i = 5; i < sent.length; i++)
    t.ok(sent[i].at - sent[i - 5].at >= 800, `no more than 5 arrive in any 800 ms (${i}): ${sent[i].at - sent[i - 5].at} ms`);
  const { deliveries } = await allDeliveries(w, hook.id);
  t.ok(deliveries.every((d: any) => d.status === 'success'));
  const bad = await w.api('PATCH', hookApi(w, hook), { body: { max_rate: 0 } });
  t.equal(bad.status, 422);
  t.equal((await w.api('PATCH', hookApi(w, hook), { body: { max_rate: 1001 } })).status, 422);
  t.equal((await w.api('PATCH', hookApi(w, hook), { body: { max_rate: null } })).body.max_rate, null, 'null: not paced');
});

t.test('a webhook paused for WEBHOOK_DISABLE_AFTER is deactivated; its deliveries, and those of later events, stay held until it is reactivated', async (t) => {
  const { w, repo, rx, state, hook } = await setup(t, {
    WEBHOOK_PAUSE_AFTER: '2',
    WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms',
    WEBHOOK_PROBE_AFTER: '1h',
    WEBHOOK_DISABLE_AFTER: '2s',
  });
  state.down = true;
  await raise(w, repo, [{ type: 'push', n: 2 }]);
  const disabled = await waitFor(
    async () => {
      const h = await getHook(w, hook);
      return h.health.state === 'disabled' ? h : null;
    },
    { what: 'the webhook to be disabled' },
  );
  t.match(disabled, { active: false, health: { state: 'disabled', held: 2 } });
  t.match(disabled.health.reason, /paused too long/);
  t.match(w.logs.join(''), /webhook disabled: paused too long; its deliveries stay held until it is reactivated/);
  await raise(w, repo, [{ type: 'push' }]);
  t.equal((await getHook(w, hook)).health.held, 3, 'an event after the deactivation is held too');
  const sentBefore = pushes(rx).length;
  const { deliveries } = await allDeliveries(w, hook.id);
  t.ok(
    deliveries.filter((d: any) => d.event === 'push').every((d: any) => d.status === 'pending' && d.attempts < 3),
    'held deliveries are pending with their attempts unspent',
  );
  state.down = false;
  t.equal((await w.api('PATCH', hookApi(w, hook), { body: { active: true } })).body.health.state, 'healthy');
  await deliveriesSettled(w.running.services.db, {}, { what: 'the held deliveries' });
  t.equal(pushes(rx).length, sentBefore + 3, 'all three delivered after the reactivation');
  // The three are sent side by side and may arrive in any order: the one held from its creation is the newest delivery.
  const newest = deliveries.filter((d: any) => d.event === 'push').reduce((a: any, b: any) => (b.id > a.id ? b : a));
  const itsAttempts = pushes(rx).filter((r) => r.guid === newest.guid);
  t.same(
    itsAttempts.map((r) => r.attempt),
    [1],
    'the one held from its creation is sent once, as attempt 1',
  );
});

t.test('Retry-After is read as seconds or an HTTP date, on 429 and 503 only, and capped at one hour', async (t) => {
  const now = Date.parse('2026-11-25T10:00:00Z');
  t.equal(retryAfterAt(503, '4', now), now + 4000);
  t.equal(retryAfterAt(429, 'Wed, 25 Nov 2026 10:00:30 GMT', now), now + 30_000);
  t.equal(retryAfterAt(503, '86400', now), now + 3_600_000, 'a day is cut to an hour');
  t.equal(retryAfterAt(429, 'Thu, 26 Nov 2026 10:00:00 GMT', now), now + 3_600_000);
  t.equal(retryAfterAt(500, '4', now), null, 'a 500 has no say');
  t.equal(retryAfterAt(503, 'soon', now), null, 'unreadable: ignored');
});

t.test('a disabled webhook holds deliveries for DELIVERY_RETENTION; older ones end "webhook disabled" and bulk redelivery brings them back', async (t) => {
  const { w, repo, rx, state, hook } = await setup(t, { WEBHOOK_CONCURRENCY: '1', WEBHOOK_RETRY_SCHEDULE: '0s,200ms', DELIVERY_RETENTION: '3s' });
  state.status = 410;
  await raise(w, repo, [{ type: 'push', n: 3 }]);
  await waitFor(async () => (await getHook(w, hook)).health.state === 'disabled', { what: 'the webhook disabled by the 410' });
  await raise(w, repo, [{ type: 'push' }]);
  await deliveriesSettled(w.running.services.db, {}, { what: 'the held deliveries to pass DELIVERY_RETENTION and end' });
  const pushed = (await allDeliveries(w, hook.id)).deliveries.filter((d: any) => d.event === 'push');
  t.equal(pushes(rx).length, 1, 'only the attempt that got the 410 was sent');
  t.equal(
    pushed.filter((d: any) => d.status === 'failed' && d.error === 'webhook disabled' && d.attempts === 0).length,
    3,
    'the three held ones (two pending at the 410, one raised after) ended unattempted',
  );
  t.match((await getHook(w, hook)).health, { state: 'disabled', reason: '410 Gone', held: 0 });
  t.match(w.logs.join(''), /held deliveries older than DELIVERY_RETENTION failed/);
  state.status = 200;
  t.equal((await w.api('PATCH', hookApi(w, hook), { body: { active: true } })).body.health.state, 'healthy');
  const redo = await w.api('POST', `/api/v1/webhooks/${hook.id}/deliveries/redeliver`, { body: { since: new Date(Date.now() - 60_000).toISOString() } });
  t.equal(redo.status, 202);
  t.equal(redo.body.redelivered, 4, 'the three that ended "webhook disabled" and the one that got the 410');
  await deliveriesSettled(w.running.services.db, {}, { what: 'the redeliveries' });
  t.equal(pushes(rx).length, 5, 'all delivered again');
});
