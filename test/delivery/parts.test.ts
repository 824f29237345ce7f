// The dispatcher's parts, each on its own against the real database: the claim loop with
// the real claim, the result writer with the real result write, the due timer with the
// real next-due query, the pruner with the real prune.
import t from 'tap';
import { startWharf, buildRepo, type TestLike } from '../helpers/wharf.ts';
import { startReceiver } from './receiver.ts';
import { buildWebhook } from './build.ts';
import type { Db } from '../../src/db/connect.ts';
import { claimDue, PARK_AFTER, type Claimed, type ClaimHealth } from '../../src/delivery/store/claim.ts';
import { createGate } from '../../src/delivery/pacing/gate.ts';
import { recordResults, type AttemptResult } from '../../src/delivery/store/complete.ts';
import { nextDueAt } from '../../src/delivery/store/nextDue.ts';
import { pruneFinished } from '../../src/delivery/store/prune.ts';
import { createClaimLoop } from '../../src/delivery/runtime/claimLoop.ts';
import { createResultWriter } from '../../src/delivery/runtime/resultWriter.ts';
import { createDueTimer } from '../../src/delivery/runtime/dueTimer.ts';
import { createPruner } from '../../src/delivery/runtime/pruner.ts';
import { dispatchTuning } from '../../src/delivery/runtime/tuning.ts';
import { waitFor } from '../helpers/wait.ts';
import { attemptMaker } from '../../src/delivery/attempt/attempt.ts';
import { httpTransport } from '../../src/delivery/attempt/http/transport.ts';
import { deliveryMetrics } from '../../src/delivery/attempt/metrics.ts';
import { markInFlight } from '../../src/delivery/store/markInFlight.ts';

/** A Wharf without workers (nothing claims behind the test's back), an inactive webhook, and `n` deliveries of it inserted with `over`. */
async function withDeliveries(t: TestLike, n: number, over: (i: number) => Record<string, unknown> = () => ({})) {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' }, workers: [] });
  const repo = await buildRepo(w, 'acme', 'app');
  const hook = await buildWebhook(w, repo, await startReceiver(t), { active: false });
  const db: Db = w.running.services.db;
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    await db('deliveries').insert({
      webhook_id: hook.id,
      payload: `{"n":${i}}`,
      guid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      event: 'ping',
      status: 'pending',
      attempts: 0,
      next_attempt_at: now - 1000,
      created_at: now - 1000,
      ...over(i),
    });
  }
  return { db, log: w.running.services.log, config: w.running.services.config };
}

const claim =
  (db: Db, owner = 'A') =>
  (limit: number) =>
    claimDue(db, { owner, limit, now: Date.now(), leaseMs: 60_000, firstDelayMs: 0 });

const result = (c: Claimed, over: Partial<AttemptResult> = {}): AttemptResult => ({
  deliveryId: c.id,
  attempt: c.attempt,
  claims: c.claims,
  status: 'success',
  nextAttemptAt: null,
  outcome: 'delivered',
  reason: null,
  startedAt: Date.now(),
  endedAt: Date.now(),
  durationMs: 1,
  statusCode: 200,
  error: null,
  requestHeaders: {},
  responseHeaders: {},
  responseBody: 'ok',
  hookId: c.hookId,
  health: null,
  retryAfterAt: null,
  ...over,
});

t.test('claim loop: claims as many as there are free places, waits for a batch while work is in flight, claims each delivery once', async (t) => {
  const { db } = await withDeliveries(t, 25);
  const held: Claimed[] = [];
  let settled = 0;
  const loop = createClaimLoop<Claimed>({
    claim: claim(db),
    start: (c) => held.push(c),
    freeSlots: () => 10 - held.length,
    inFlight: () => held.length,
    batchMin: 5,
    onError: (err) => t.fail(String(err)),
    settled: () => settled++,
  });
  const pass = async () => {
    const before = settled;
    loop.wake();
    await waitFor(() => settled !== before, { intervalMs: 5, what: 'the claim loop to settle a pass' });
  };
  await pass();
  t.equal(held.length, 10, 'one claim fills the ten places');
  t.equal(loop.moreDue, true, 'and says more is due');
  const ids = held.splice(0, 3).map((c) => c.id);
  await pass();
  t.equal(held.length, 7, 'three free places of ten, with work in flight: no claim for fewer than a batch');
  ids.push(...held.splice(0, 7).map((c) => c.id));
  await pass();
  t.equal(held.length, 10);
  ids.push(...held.splice(0).map((c) => c.id));
  await pass();
  t.equal(held.length, 5, 'the last five');
  t.equal(loop.moreDue, false, 'nothing more is due');
  ids.push(...held.map((c) => c.id));
  t.equal(new Set(ids).size, 25, 'each delivery claimed once');
  await loop.stop();
});

t.test(
  'result writer: results of one turn go in one write; each add resolves once its result is in the database; a failed write is reported, not thrown',
  async (t) => {
    const { db } = await withDeliveries(t, 6);
    const claimed = await claim(db)(6);
    const batches: number[] = [];
    const errors: unknown[] = [];
    let fail = false;
    const writer = createResultWriter<AttemptResult>({
      write: async (batch) => {
        batches.push(batch.length);
        if (fail) throw new Error('the database is away');
        return recordResults(db, 'A', batch);
      },
      writers: 1,
      maxBatch: 500,
      onError: (err) => errors.push(err),
    });
    await Promise.all(claimed.slice(0, 4).map((c) => writer.add(result(c))));
    t.same(batches, [4], 'four results of one turn, one write');
    t.equal(Number((await db('deliveries').where('status', 'success').count({ n: '*' }))[0].n), 4, 'written when add resolved');
    fail = true;
    await writer.add(result(claimed[4]));
    t.equal(errors.length, 1, 'the failure went to onError');
    fail = false;
    const last = writer.add(result(claimed[5]));
    await writer.drain();
    await last;
    t.match(await db('deliveries').where('id', claimed[5].id).first('status', 'attempts', 'claims'), { status: 'success', attempts: 1, claims: 0 });
  },
);

t.test('due timer: fires when the next delivery falls due, or after the idle poll when none is pending', async (t) => {
  const { db } = await withDeliveries(t, 1, () => ({ next_attempt_at: Date.now() + 400 }));
  const fired = () =>
    new Promise<number>((resolve) => {
      const start = Date.now();
      const timer = createDueTimer({
        nextDue: () => nextDueAt(db),
        fire: () => (timer.stop(), resolve(Date.now() - start)),
        idlePollMs: 5_000,
        skip: () => false,
        onError: (err) => t.fail(String(err)),
      });
      timer.want();
    });
  const waited = await fired();
  t.ok(waited >= 300 && waited < 4_000, `fired when the delivery fell due (${waited} ms)`);
  await db('deliveries').update({ status: 'success', next_attempt_at: null, finished_at: Date.now() });
  const idle = await new Promise<number>((resolve) => {
    const start = Date.now();
    const timer = createDueTimer({
      nextDue: () => nextDueAt(db),
      fire: () => (timer.stop(), resolve(Date.now() - start)),
      idlePollMs: 300,
      skip: () => false,
      onError: (err) => t.fail(String(err)),
    });
    timer.want();
  });
  t.ok(idle >= 250, `with nothing pending it polls after the idle time (${idle} ms)`);
});

t.test('pruner: deletes finished deliveries older than the retention, keeps the rest', async (t) => {
  const day = 86_400_000;
  const now = Date.now();
  const { db, log } = await withDeliveries(
    t,
    4,
    (i) =>
      [
        { status: 'success', finished_at: now - 40 * day, next_attempt_at: null },
        { status: 'failed', finished_at: now - 31 * day, next_attempt_at: null },
        { status: 'success', finished_at: now - 1 * day, next_attempt_at: null },
        { status: 'pending' },
      ][i],
  );
  const pruner = createPruner({ prune: (before) => pruneFinished(db, before), retentionMs: 30 * day, everyMs: 60_000, db, node: 'test', log });
  t.equal(await pruner.run(), 2, 'the two finished over 30 days ago');
  t.same(
    (await db('deliveries').orderBy('id').select('status')).map((r: any) => r.status),
    ['success', 'pending'],
  );
  const broken = createPruner({
    prune: async () => {
      throw new Error('no database');
    },
    retentionMs: day,
    everyMs: 60_000,
    db,
    node: 'test',
    log,
  });
  t.equal(await broken.run(), 0, 'a failure is logged, not thrown');
});

t.test('tuning: one place per dialect; the lease covers the attempts a claim may wait for and its own', async (t) => {
  const config = { webhookConcurrency: 64, webhookTimeoutMs: 10_000 };
  const sqlite = dispatchTuning('sqlite', config);
  const postgres = dispatchTuning('postgres', config);
  t.match(sqlite, { ahead: 1, writers: 1, claimBatchMin: 32 });
  t.match(postgres, { ahead: 2, writers: 4, claimBatchMin: 32 });
  for (const x of [sqlite, postgres]) t.ok(x.leaseMs > (1 + x.ahead) * config.webhookTimeoutMs);
});

t.test(
  'claim: node deaths are counted within one attempt; a delivery whose node died once in each of three attempts is not parked, its next attempt is sent',
  async (t) => {
    const { db } = await withDeliveries(t, 1);
    let now = Date.now();
    const claimAt = (owner: string) => claimDue(db, { owner, limit: 1, now: (now += 10), leaseMs: 1, firstDelayMs: 0 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [first] = await claimAt(`died-${attempt}`); // its node dies with the attempt in flight: no result
      t.match(first, { attempt, claims: 1, interruptions: 0 }, `attempt ${attempt}: claimed with no death counted against it`);
      const [retaken] = await claimAt(`took-over-${attempt}`);
      t.match(retaken, { attempt, claims: 2, interruptions: 1 }, `attempt ${attempt}: taken over, the death counted`);
      const written = await recordResults(db, `took-over-${attempt}`, [
        result(retaken, {
          status: 'pending',
          outcome: 'failed',
          reason: '500 Internal Server Error',
          statusCode: 500,
          responseBody: 'no',
          nextAttemptAt: (now += 10),
        }),
      ]);
      t.equal(written, 1, `attempt ${attempt}: its failure recorded`);
    }
    const [fourth] = await claimAt('last');
    t.match(fourth, { attempt: 4, interruptions: 0 }, 'the fourth attempt carries no deaths of earlier attempts');
    t.ok(fourth.interruptions < PARK_AFTER, 'so it is sent, not parked');
  },
);

t.test('an interrupted delivery whose attempt ended before its node died is not counted again; one still in flight is', async (t) => {
  // Two deliveries one death short of parking: claimed twice, each claim's node dead during the attempt.
  const { db, log, config } = await withDeliveries(t, 2, () => ({ claims: 2, interruptions: 1, in_flight: true, lease_owner: 'dead' }));
  const leaseMs = 60_000;
  const [ended, inFlight] = await claimDue(db, { owner: 'A', limit: 2, now: Date.now(), leaseMs, firstDelayMs: 0 });
  t.match([ended, inFlight], [{ interruptions: PARK_AFTER - 1 }, { interruptions: PARK_AFTER - 1 }], 'each is one death short of parking');
  const transport = httpTransport(config);
  t.teardown(() => transport.close());
  const attempt = attemptMaker({
    config,
    transport,
    metrics: deliveryMetrics({}),
    log,
    markInFlight: (c, flying) => markInFlight(db, 'A', c.id, c.claims, flying, Date.now() + leaseMs),
  });
  // The first is sent alone and answered; its node dies before its result is written. The
  // second has been marked started when the node dies (as a culprit is).
  const made = await attempt(ended);
  t.equal(made.outcome, 'delivered', 'the receiver took it');
  t.ok(await markInFlight(db, 'A', inFlight.id, inFlight.claims, true, Date.now() + leaseMs));
  const retaken = await claimDue(db, { owner: 'B', limit: 2, now: Date.now() + 2 * leaseMs, leaseMs, firstDelayMs: 0 });
  t.equal(retaken.find((c) => c.id === ended.id)?.interruptions, PARK_AFTER - 1, 'the answered attempt is not counted as interrupted');
  t.equal(retaken.find((c) => c.id === inFlight.id)?.interruptions, PARK_AFTER, 'the attempt in flight at the death is');
});

t.test('the claim ranks by time served: the webhook served less first, its own in order; an odd limit over many webhooks', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' }, workers: [] });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const slow = await buildWebhook(w, repo, rx, { url: `${rx.url}/slow`, active: false });
  const fast = await buildWebhook(w, repo, rx, { url: `${rx.url}/fast`, active: false });
  const db: Db = w.running.services.db;
  const now = Date.now();
  let n = 0;
  const insert = async (webhookId: number, count: number) => {
    for (let i = 0; i < count; i++, n++)
      await db('deliveries').insert({
        webhook_id: webhookId,
        payload: `{"n":${n}}`,
        guid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        event: 'ping',
        status: 'pending',
        attempts: 0,
        next_attempt_at: now - 1000 + n, // the slow webhook's are the oldest
        created_at: now - 1000,
      });
  };
  await insert(slow.id, 4);
  await insert(fast.id, 4);
  const claim = (owner: string, limit: number, shares?: Parameters<typeof claimDue>[1]['shares']) =>
    claimDue(db, { owner, limit, now: Date.now(), leaseMs: 60_000, firstDelayMs: 0, shares });

  const alike = await claim('A', 2);
  t.same(
    alike.map((c) => c.hookId),
    [slow.id, fast.id],
    'served alike (no ledger): the two take turns',
  );
  await db('deliveries').update({ lease_owner: null, next_attempt_at: now - 1000, claims: 0 });

  const org = alike[0].org;
  const shares = {
    hooks: [
      { hook: slow.id, servedMs: 3000, holdMs: 3000 },
      { hook: fast.id, servedMs: 20, holdMs: 20 },
    ],
    orgs: [{ org, servedMs: 3020 }],
  };
  const ranked = await claim('B', 5, shares);
  t.same(
    ranked.map((c) => c.hookId),
    [slow.id, fast.id, fast.id, fast.id, fast.id],
    "the one served 20 ms takes all four of its own before the one served 3 s gets a second (by id: the slow one's oldest is the first row)",
  );
  const fastIds = ranked.filter((c) => c.hookId === fast.id).map((c) => c.id);
  t.same(
    fastIds,
    [...fastIds].sort((x, y) => x - y),
    'in order of creation within the webhook',
  );

  // 17 more webhooks with due work and a limit that does not divide: each ranks a whole number of its own.
  await db('deliveries').update({ lease_owner: null, next_attempt_at: now - 1000, claims: 0 });
  for (let h = 0; h < 17; h++) await insert((await buildWebhook(w, repo, rx, { url: `${rx.url}/h${h}`, active: false })).id, 3);
  const odd = await claim('C', 37, shares);
  t.equal(odd.length, 37, 'a claim of 37 over 19 webhooks fills');
});

t.test('pacing gate: an attempt that wakes late for its slot takes a later one, so starts stay a slot apart', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' }, workers: [] });
  const repo = await buildRepo(w, 'acme', 'app');
  const hook = await buildWebhook(w, repo, await startReceiver(t), { active: false });
  const db: Db = w.running.services.db;
  await db('webhooks').where('id', hook.id).update({ max_rate: 5 });
  const gate = createGate(db, { unhealthySince: () => undefined, notBefore: () => undefined });
  const health: ClaimHealth = { state: 'healthy', failing: 0, probe: null, notBefore: null, maxRate: 5 };
  const claimed = (id: number) => ({ id, hookId: hook.id, event: 'issue', claimedAt: Date.now(), health }) as Claimed;
  // Three attempts reserve the slots now, +200 ms and +400 ms; then this process is busy
  // for 450 ms (as a loaded machine's event loop can be), so the second and third wake late.
  const starts: number[] = [];
  const gated = [1, 2, 3].map(async (id) => {
    const verdict = await gate(claimed(id));
    t.same(verdict, { send: true }, `attempt ${id} is sent, not put off`);
    starts.push(Date.now());
  });
  const until = Date.now() + 450;
  while (Date.now() < until);
  await Promise.all(gated);
  starts.sort((a, b) => a - b);
  for (let i = 1; i < starts.length; i++)
    t.ok(starts[i] - starts[i - 1] >= 180, `start ${i + 1} is a slot (200 ms) after start ${i}: ${starts[i] - starts[i - 1]} ms`);
});
