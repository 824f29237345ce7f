// A delivery in flight beside one whose attempt kills its node is not parked with it: from
// the first death on, an interrupted delivery is sent with no other attempt of its process
// in flight, so only the culprit keeps dying with its node and reaches the threshold.
import t from 'tap';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { startFleet, type Node } from './fleet.ts';

t.test('a slow delivery sent beside a delivery that kills its node is delivered, not parked', async (t) => {
  let node: Node | undefined;
  let deaths = 0;
  const rx = await startReceiver(t, (r) => {
    const seq = r.event === 'issue' ? JSON.parse(r.body.toString()).seq : null;
    if (seq === -1) {
      deaths += 1;
      node?.child.kill('SIGKILL');
      return { reset: true, delayMs: 2000 };
    }
    // The bystander answers slowly, so it is in flight whenever the culprit is sent beside it.
    if (seq === -2) return { status: 200, delayMs: 1500 };
    return { status: 200 };
  });
  const fleet = await startFleet(t, { WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s,1s', WEBHOOK_TIMEOUT: '5s', WEBHOOK_CONCURRENCY: '4' }, rx.url);
  node = fleet.first;
  const { recordEvents } = await import('../../src/events/outbox.ts');
  const [repo] = await fleet.db('repositories').select('id');
  // The bystander first, so the first claim takes both and starts both at once.
  await recordEvents(
    fleet.db,
    [-2, -1].map((seq) => ({ repositoryId: Number(repo.id), type: 'issue' as const, action: 'opened', senderId: null, payload: { action: 'opened', seq } })),
  );
  const row = (seq: number) =>
    fleet
      .db('deliveries')
      .where('event', 'issue')
      .orderBy('id')
      .offset(seq === -2 ? 0 : 1)
      .first();
  // Each node either dies of the culprit (then the next one starts) or parks it.
  const parkedOrDied = async (n: Node) => {
    let died = false;
    void n.exited.then(() => (died = true));
    return waitFor(async () => (died ? 'died' : (await row(-1)).status !== 'pending' ? 'parked' : null), {
      what: 'the culprit parked or its node dead',
      timeoutMs: 120_000,
      intervalMs: 50,
    });
  };
  while ((await parkedOrDied(node)) === 'died') {
    t.ok(deaths <= 3, `death ${deaths}: at most 3 before parking`);
    if (deaths > 3) break;
    node = await fleet.serve();
  }
  const culprit = await row(-1);
  const bystander = await waitFor(
    async () => {
      const r = await row(-2);
      return r.status !== 'pending' ? r : null;
    },
    { what: 'the bystander to settle', timeoutMs: 60_000 },
  );
  t.equal(culprit.status, 'failed', 'the culprit is parked');
  t.match(culprit.error, /^parked: /);
  t.equal(bystander.status, 'success', `the bystander was delivered (${bystander.error ?? 'no error'})`);
  t.equal(node.child.exitCode, null, 'the last node is alive');
});
