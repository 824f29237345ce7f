import t from 'tap';
import { startReceiver, type Received } from './receiver.ts';
import { attemptsByGuid, startFleet } from './fleet.ts';
import { waitFor } from '../helpers/wait.ts';
import { attemptStarts } from './build.ts';

// Endpoint health (SPEC §5.5) with real `wharf serve` processes: a SIGKILL while a webhook
// is paused and another while its held deliveries are being released lose nothing and
// spend no attempt; on Postgres, two nodes send one probe at a time and share a webhook's
// max_rate.

const health = async (db: any, hookId: number) => db('webhooks').where('id', hookId).first('health_state', 'active');
const held = async (db: any, hookId: number) =>
  Number((await db('deliveries').where({ webhook_id: hookId, status: 'pending' }).whereNull('next_attempt_at').count({ n: '*' }))[0].n);

t.test('SIGKILL while paused and while resuming: every held delivery arrives, as attempt 1, none lost', async (t) => {
  let down = true;
  const rx = await startReceiver(t, (r) => (r.event === 'ping' ? {} : down ? { status: 500 } : { delayMs: 150 }));
  const fleet = await startFleet(
    t,
    {
      WEBHOOK_PAUSE_AFTER: '3',
      WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms',
      WEBHOOK_PROBE_AFTER: '2s',
      WEBHOOK_CONCURRENCY: '2',
    },
    rx.url,
  );
  await fleet.raise(1);
  await waitFor(async () => (await health(fleet.db, fleet.hookId)).health_state === 'paused', { what: 'the pause' });
  await fleet.raise(20);
  // Held: all but, at most, the one a probe has just made due.
  t.ok((await held(fleet.db, fleet.hookId)) >= 20, 'the new deliveries are held');

  fleet.first.child.kill('SIGKILL');
  await fleet.first.exited;
  t.equal((await fleet.counts()).pending, 21, 'a kill while paused loses no delivery');
  t.ok((await held(fleet.db, fleet.hookId)) >= 20, '… and they stay held');
  const second = await fleet.serve();

  // The receiver recovers: the next probe resumes the webhook and the held deliveries go out; the node dies mid-way.
  down = false;
  await waitFor(() => rx.received.filter((r) => r.event === 'issue' && r.attempt === 1).length >= 6, { what: 'the release to be under way' });
  second.child.kill('SIGKILL');
  await second.exited;
  await fleet.serve();
  await waitFor(async () => (await fleet.counts()).pending === 0, { what: 'every delivery to finish', timeoutMs: 90_000 });

  const rows = await fleet.deliveries();
  t.equal(rows.length, 21);
  t.ok(
    rows.every((d) => d.status === 'success'),
    'every delivery succeeded',
  );
  const byGuid = attemptsByGuid(rx.received);
  const first = [...byGuid.values()].filter((a) => a[0] === 1 && a.length > 1 && a.some((n) => n > 1));
  t.equal(first.length, 1, 'one delivery failed before the pause and was probed');
  const heldOnes = rows.filter((d) => d.attempts === 1);
  t.equal(heldOnes.length, 20, 'the 20 held deliveries each succeeded at attempt 1: no attempt spent while held');
  for (const d of heldOnes) {
    const seen = byGuid.get(d.guid) ?? [];
    t.ok(seen.length >= 1 && seen.every((n) => n === 1), `${d.guid} arrived as attempt 1 (${seen.length}× — a kill may repeat an attempt in flight)`);
  }
  t.equal((await health(fleet.db, fleet.hookId)).health_state, 'healthy');
});

t.test('two nodes on one Postgres: one probe at a time, and max_rate shared', { skip: process.env.TEST_DATABASE_URL ? false : 'Postgres only' }, async (t) => {
  let down = true;
  let inFlight = 0;
  let most = 0;
  const rx = await startReceiver(t, (r: Received) => {
    if (r.event === 'ping' || r.path !== '/hook') return {};
    if (!down) return {};
    inFlight += 1;
    most = Math.max(most, inFlight);
    setTimeout(() => (inFlight -= 1), 400);
    return { status: 500, delayMs: 400 };
  });
  const fleet = await startFleet(
    t,
    { WEBHOOK_PAUSE_AFTER: '2', WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms', WEBHOOK_PROBE_AFTER: '300ms' },
    rx.url,
    { secondHookPath: '/paced' },
  );
  await fleet.serve();
  await fleet.raise(1);
  await waitFor(async () => (await health(fleet.db, fleet.hookId)).health_state === 'paused', { what: 'the pause' });
  await fleet.raise(10);
  const before = rx.received.filter((r) => r.path === '/hook' && r.event === 'issue').length;
  // Probes at 300 ms, 600 ms, 1.2 s, 2.4 s: wait for three of them.
  await waitFor(() => rx.received.filter((r) => r.path === '/hook' && r.event === 'issue').length >= before + 3, { what: 'three probes', timeoutMs: 30_000 });
  t.equal(most, 1, 'never more than one attempt in flight to the paused webhook, across both nodes');
  const probes = rx.received.filter((r) => r.path === '/hook' && r.event === 'issue').slice(before);
  t.ok(
    probes.every((r) => r.guid === probes[0].guid),
    'each probe is the oldest held delivery',
  );
  down = false;
  await waitFor(async () => (await health(fleet.db, fleet.hookId)).health_state === 'healthy', { what: 'the resume', timeoutMs: 30_000 });

  // Pacing across both nodes: 20 deliveries at 5 a second to the second webhook.
  const paced = fleet.secondHookId!;
  const patched = await fetch(`${fleet.first.url}/api/v1/repos/demo/app/webhooks/${paced}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${fleet.first.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ max_rate: 5 }),
  });
  t.equal(patched.status, 200);
  const start = rx.received.length;
  const lastBefore = Number((await fleet.db('deliveries').max({ id: 'id' }))[0].id);
  await fleet.raise(20);
  await waitFor(async () => (await fleet.counts()).pending === 0, { what: 'every delivery', timeoutMs: 60_000 });
  const sent = rx.received.slice(start).filter((r) => r.path === '/paced');
  t.equal(sent.length, 20);
  // What the pace governs: when the nodes start the attempts (each within a few ms of its
  // slot, 200 ms apart); what the receiver sees: the arrivals, which the way from a node's
  // event loop to the receiver's (on a loaded machine, tens of ms) may bring closer.
  const started = await attemptStarts(fleet.db, paced, lastBefore);
  t.equal(started.length, 20, 'one attempt each');
  for (let i = 5; i < started.length; i++)
    t.ok(started[i] - started[i - 5] >= 940, `no more than 5 attempts started in any second across both nodes (${i}): ${started[i] - started[i - 5]} ms`);
  for (let i = 5; i < sent.length; i++)
    t.ok(sent[i].at - sent[i - 5].at >= 800, `no more than 5 arrive in any 800 ms (${i}): ${sent[i].at - sent[i - 5].at} ms`);
  t.ok(
    sent.every((r) => r.attempt === 1),
    'none failed, no attempt spent waiting',
  );
});
