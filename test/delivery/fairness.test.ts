import t from 'tap';
import { startWharf, buildRepo, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { postgresUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';
import type { Repository } from '../../src/domain/repos.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import { type Services, wake } from '../../src/services.ts';
import { startReceiver } from './receiver.ts';
import { buildWebhook, raise } from './build.ts';
import { startSibling } from './servers.ts';
import { attemptsByGuid, startFleet } from './fleet.ts';
import { createOrg } from '../../src/domain/accounts.ts';

// Fair delivery (SPEC §5.2): one organization's slow receivers slow only that organization.
// Real receivers on loopback ports, the real dispatcher; both databases.

const PLACES = 8;
const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_CONCURRENCY: String(PLACES) };

/** A receiver answering at once. */
const promptReceiver = (t: TestLike) => startReceiver(t);

/** Records one issue event of `repo` through `services` (any node's) and returns when it was committed. */
async function raiseOn(services: Services, repo: Repository): Promise<number> {
  const payload = { event: 'issue', seq: 0, text: 'prompt' };
  await services.db.transaction((trx) => recordEvents(trx, [{ repositoryId: repo.id, type: 'issue', action: 'opened', senderId: null, payload }]));
  const at = Date.now();
  wake(services).deliveries();
  return at;
}

/** Raises one event for B and returns how long its delivery took to arrive, in ms. */
async function latencyOf(services: Services, repo: Repository, rx: Awaited<ReturnType<typeof promptReceiver>>): Promise<number> {
  const before = rx.received.filter((r) => r.event === 'issue').length;
  const at = await raiseOn(services, repo);
  const arrival = await waitFor(() => rx.received.filter((r) => r.event === 'issue')[before], { what: "B's delivery", timeoutMs: 60_000 });
  return arrival.at - at;
}

/** Org A's slow backlog is being worked (its receiver has taken at least every place once). */
async function backlogRunning(slow: { arrivals: unknown[] }, n: number) {
  await waitFor(() => slow.arrivals.length >= n, { what: 'the slow backlog to be under way', timeoutMs: 30_000 });
}

/** Organizations A (its receiver answering after `delayMs`) and B (answering at once), each a repository. */
async function twoTenants(t: TestLike, delayMs: number) {
  const w = await startWharf(t, { env });
  const a = await buildRepo(w, 'tenant-a', 'busy');
  const b = await buildRepo(w, 'tenant-b', 'quiet');
  const slow = await startReceiver(t, () => ({ status: 200, delayMs }));
  const fast = await promptReceiver(t);
  await buildWebhook(w, b, fast, { events: ['issue'] });
  return { w, a, b, slow, fast };
}

/** Three of B's events, `pauseMs` apart (other phases of A's slow attempts): how long each took to arrive, and whether all took under a second. */
async function probeB(w: TestWharf, b: Repository, fast: Awaited<ReturnType<typeof promptReceiver>>, pauseMs: number) {
  const latencies: number[] = [];
  for (let i = 0; i < 3; i++) {
    latencies.push(await latencyOf(w.running.services, b, fast));
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  return { ok: latencies.every((ms) => ms < 1_000), message: `B's deliveries arrived ${latencies.join(', ')} ms after their events` };
}

t.test("one webhook's backlog to a slow receiver: another organization's delivery arrives within a second", async (t) => {
  // A CI server under load: 200 after 2 s, well inside WEBHOOK_TIMEOUT.
  const { w, a, b, slow, fast } = await twoTenants(t, 2_000);
  await buildWebhook(w, a, slow, { events: ['push'] });
  await raise(w, a, [{ n: 120 }]); // 120 pushes: 30 s of work at PLACES at once
  await backlogRunning(slow, PLACES);
  const probe = await probeB(w, b, fast, 700);
  t.ok(probe.ok, probe.message);
  const [{ n }] = await w.running.services.db('deliveries').where({ status: 'pending' }).count({ n: '*' });
  t.ok(Number(n) > 60, `A's backlog was still there throughout (${n} pending)`);
});

t.test("20 webhooks of one organization to a receiver answering in 3 s: another organization's delivery within a second", async (t) => {
  const { w, a, b, slow, fast } = await twoTenants(t, 3_000);
  for (let i = 0; i < 20; i++) await buildWebhook(w, a, { url: `${slow.url}/${i}`, secrets: slow.secrets }, { events: ['push'] });
  await raise(w, a, [{ n: 5 }]); // 100 deliveries
  await backlogRunning(slow, PLACES + 20); // the pings and the first pushes
  const probe = await probeB(w, b, fast, 1_100);
  t.ok(probe.ok, probe.message);
});

/** A receiver counting the requests it holds at once, answering after `delayMs`. */
async function countingReceiver(t: TestLike, delayMs: number) {
  let now = 0;
  let most = 0;
  const rx = await startReceiver(t, () => {
    now++;
    most = Math.max(most, now);
    setTimeout(() => now--, delayMs);
    return { status: 200, delayMs };
  });
  return Object.assign(rx, { most: () => most });
}

/** Waits until `count` deliveries of `hookId` have succeeded. */
async function succeeded(w: TestWharf, hookId: number, count: number) {
  await waitFor(
    async () => {
      const [{ n }] = await w.running.services.db('deliveries').where({ webhook_id: hookId, status: 'success' }).count({ n: '*' });
      return Number(n) === count;
    },
    { what: `${count} deliveries to succeed`, timeoutMs: 60_000 },
  );
}

t.test('max_concurrency 2 is never exceeded, and every delivery arrives once', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'tenant-a', 'capped');
  const rx = await countingReceiver(t, 150);
  const hook = await buildWebhook(w, repo, rx, { events: ['push'], max_concurrency: 2 });
  await raise(w, repo, [{ n: 30 }]);
  await succeeded(w, hook.id, 31);
  t.ok(rx.most() <= 2, `at most 2 at once (${rx.most()})`);
  t.equal(rx.most(), 2, 'and the cap is used');
  t.equal(new Set(rx.received.map((r) => r.guid)).size, 31);
});

t.test('max_concurrency 2 across two nodes on one Postgres', { skip: postgresUrl ? false : 'needs TEST_DATABASE_URL (Postgres)' }, async (t) => {
  const w = await startWharf(t, { env });
  const other = await startSibling(t, w, env);
  const repo = await buildRepo(w, 'tenant-a', 'capped');
  const rx = await countingReceiver(t, 150);
  const hook = await buildWebhook(w, repo, rx, { events: ['push'], max_concurrency: 2 });
  for (let i = 0; i < 4; i++) await raise(w, repo, [{ n: 10 }]);
  await succeeded(w, hook.id, 41);
  t.ok(rx.most() <= 2, `at most 2 at once over both nodes (${rx.most()})`);
  const attempts = (logs: string[]) => logs.filter((l) => l.includes('"delivery attempt"')).length;
  t.ok(attempts(other.logs) > 0 && attempts(w.logs) > 0, 'both nodes delivered');
  await other.stop();
});

t.test(
  "three nodes on one Postgres: one organization's slow backlog leaves another's deliveries prompt on every node",
  { skip: postgresUrl ? false : 'needs TEST_DATABASE_URL (Postgres)' },
  async (t) => {
    const { w, a, b, slow, fast } = await twoTenants(t, 2_000);
    const nodes = [w.running.services, (await startSibling(t, w, env)).services, (await startSibling(t, w, env)).services];
    await buildWebhook(w, a, slow, { events: ['push'] });
    await raise(w, a, [{ n: 300 }]);
    await backlogRunning(slow, 3 * PLACES);
    const latencies: number[] = [];
    for (const services of nodes) latencies.push(await latencyOf(services, b, fast));
    t.ok(
      latencies.every((ms) => ms < 1_000),
      `B's deliveries, raised on each node, arrived ${latencies.join(', ')} ms after their events`,
    );
  },
);

t.test('SIGKILL while one organization fills every place and another has work: after a restart nothing is lost and no attempt is spent', async (t) => {
  const rx = await startReceiver(t, (r) => ({ status: 200, delayMs: r.path === '/hook' ? 1_000 : 0 }));
  const fleet = await startFleet(t, { WEBHOOK_CONCURRENCY: '4', WEBHOOK_TIMEOUT: '2s' }, rx.url);
  rx.secrets.set(fleet.hookId, fleet.secret);
  await createOrg(fleet.db, 'other');
  const api = (method: string, p: string, body?: unknown) =>
    fetch(fleet.first.url + p, {
      method,
      headers: { authorization: `Bearer ${fleet.first.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const repo = await api('POST', '/api/v1/orgs/other/repos', { name: 'quiet' });
  t.equal(repo.status, 201);
  const hook = await api('POST', '/api/v1/repos/other/quiet/webhooks', { url: `${rx.url}/other`, events: ['issue'] });
  t.equal(hook.status, 201);
  rx.secrets.set(hook.body.id, hook.body.secret);
  await fleet.raise(30); // demo's slow receiver: 30 s of work at 4 at once
  await waitFor(() => rx.arrivals.filter((a) => a.path === '/hook').length >= 4, { what: 'every place taken by demo' });
  const other = Array.from({ length: 10 }, (_, i) => ({
    repositoryId: Number(repo.body.id),
    type: 'issue' as const,
    action: 'opened',
    senderId: null,
    payload: { action: 'opened', seq: i },
  }));
  await recordEvents(fleet.db, other);
  await waitFor(() => rx.arrivals.some((a) => a.path === '/other' && a.event === 'issue'), { what: "the other organization's first delivery" });
  fleet.first.child.kill('SIGKILL');
  await fleet.first.exited;
  await fleet.serve();
  const ids = [fleet.hookId, Number(hook.body.id)];
  await waitFor(
    async () => {
      const [{ n }] = await fleet.db('deliveries').whereIn('webhook_id', ids).whereNot('event', 'ping').where('status', 'success').count({ n: '*' });
      return Number(n) === 40;
    },
    { what: 'all 40 deliveries to succeed after the restart', timeoutMs: 90_000 },
  );
  for (const id of ids) {
    const rows = await fleet.deliveries(id);
    t.ok(
      rows.every((d) => d.status === 'success' && d.attempts === 1 && d.recorded.join() === '1'),
      `webhook ${id}: every delivery succeeded on attempt 1, recorded once`,
    );
  }
  const seen = attemptsByGuid(rx.received);
  t.equal(seen.size, 40, 'the receiver got all 40');
  t.ok(
    [...seen.values()].every((list) => list.every((a) => a === 1)),
    'what the kill repeated came again as attempt 1',
  );
});
