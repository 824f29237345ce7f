// A delivery whose attempt kills the node sending it, every time: after 3 such deaths it
// is parked (failed, `parked:` error, never sent again by itself), other deliveries flow,
// /metrics counts it, and a manual redelivery still sends it.
import t from 'tap';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { startFleet, type Node } from './fleet.ts';

t.test('a delivery whose attempts kill wharf serve 3 times is parked, not sent a 4th time; the others still flow; redelivery works', async (t) => {
  let node: Node | undefined;
  let poisonous = true;
  const poisonGuids: string[] = [];
  const rx = await startReceiver(t, (r) => {
    if (r.event === 'issue' && JSON.parse(r.body.toString()).seq === -1) {
      poisonGuids.push(r.guid);
      // The node dies during this attempt, as if the answer had crashed it.
      if (poisonous) node?.child.kill('SIGKILL');
      if (poisonous) return { reset: true, delayMs: 2000 };
    }
    return { status: 200 };
  });
  const fleet = await startFleet(t, { WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s,1s', WEBHOOK_TIMEOUT: '1s', WEBHOOK_CONCURRENCY: '4' }, rx.url);
  node = fleet.first;
  const raise = async (seqs: number[]) => {
    const { recordEvents } = await import('../../src/events/outbox.ts');
    const [repo] = await fleet.db('repositories').select('id');
    await recordEvents(
      fleet.db,
      seqs.map((seq) => ({ repositoryId: Number(repo.id), type: 'issue' as const, action: 'opened', senderId: null, payload: { action: 'opened', seq } })),
    );
  };
  const poisonRow = () => fleet.db('deliveries').whereIn('id', fleet.db('deliveries').where('event', 'issue').min('id')).first();
  await raise([-1]);
  let ok = 0;
  for (let death = 1; death <= 3; death++) {
    await node.exited;
    t.equal(poisonGuids.length, death, `death ${death}: the node died while sending the delivery`);
    node = await fleet.serve();
    // Other work flows on the restarted node while the dead node's lease runs out.
    await raise([ok, ok + 1, ok + 2]);
    ok += 3;
    await waitFor(async () => (await fleet.db('deliveries').where('event', 'issue').where('status', 'success').count({ n: '*' }))[0].n == ok, {
      what: 'the other deliveries to succeed',
      timeoutMs: 60_000,
    });
  }
  const parked = await waitFor(
    async () => {
      const row = await poisonRow();
      return row.status !== 'pending' ? row : null;
    },
    { what: 'the delivery to be parked', timeoutMs: 60_000 },
  );
  t.equal(node.child.exitCode, null, 'the fourth node is alive');
  t.equal(parked.status, 'failed', 'the delivery ended failed');
  t.match(parked.error, /^parked: .*stopped 3 times/, `its error says why: ${parked.error}`);
  t.equal(poisonGuids.length, 3, 'it was not sent a 4th time');
  t.equal(parked.next_attempt_at, null, 'nothing more is scheduled');

  const api = async (method: string, p: string) => {
    const r = await fetch(node!.url + p, { method, headers: { authorization: `Bearer ${fleet.first.token}` } });
    return { status: r.status, body: (await r.json().catch(() => null)) as any, text: '' };
  };
  const listed = await api('GET', `/api/v1/webhooks/${fleet.hookId}/deliveries/${parked.id}`);
  t.equal(listed.status, 200);
  t.match(listed.body, { status: 'failed', error: /^parked: / }, 'the history API shows it parked');
  const metrics = await (await fetch(`${node.url}/metrics`)).text();
  t.match(metrics, /^wharf_parked\{kind="delivery"\} 1$/m, 'the gauge counts it');

  await raise([ok]);
  ok += 1;
  await waitFor(async () => (await fleet.db('deliveries').where('event', 'issue').where('status', 'success').count({ n: '*' }))[0].n == ok, {
    what: 'later deliveries to succeed',
    timeoutMs: 60_000,
  });
  t.equal(poisonGuids.length, 3, 'the parked delivery was still not sent again');

  poisonous = false;
  const again = await api('POST', `/api/v1/webhooks/${fleet.hookId}/deliveries/${parked.id}/retry`);
  t.equal(again.status, 202, 'a parked delivery can be redelivered');
  await waitFor(() => poisonGuids.length === 4, { what: 'the redelivery to arrive', timeoutMs: 30_000 });
  const copy = await waitFor(async () => (await fleet.db('deliveries').where('redelivery_of', parked.id).where('status', 'success').first()) ?? null, {
    what: 'the redelivery to succeed',
    timeoutMs: 30_000,
  });
  t.equal(copy.guid, parked.guid, 'with the same guid');
});
