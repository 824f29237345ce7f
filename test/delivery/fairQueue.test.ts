import t from 'tap';
import { FairQueue } from '../../src/delivery/pacing/fairQueue.ts';
import { ServiceLedger } from '../../src/delivery/pacing/serviceLedger.ts';
import { DEFAULT_HOLD_MS } from '../../src/delivery/store/shares.ts';

/** A task of `org`/`hook` that runs until released; `started` lists the names in start order. */
function harness(queue: FairQueue) {
  const started: string[] = [];
  const release = new Map<string, (fail?: boolean) => void>();
  const add = (name: string, org: number, hook: number, cap: number | null = null) =>
    queue.add({
      org,
      hook,
      cap,
      run: () =>
        new Promise<void>((resolve, reject) => {
          started.push(name);
          release.set(name, (fail) => (fail ? reject(new Error(name)) : resolve()));
        }),
    });
  const end = async (name: string, fail = false) => {
    release.get(name)!(fail);
    await new Promise((r) => setImmediate(r));
  };
  return { started, add, end };
}

t.test('a freed place goes to the organization running the fewest; among equals, the one served longest ago', async (t) => {
  const q = new FairQueue(2, 0);
  const { started, add, end } = harness(q);
  add('a1', 1, 10);
  add('a2', 1, 10);
  add('a3', 1, 10);
  add('a4', 1, 11);
  add('b1', 2, 20);
  t.same(started, ['a1', 'a2'], 'A alone at first: it takes both places');
  await end('a1');
  t.same(started, ['a1', 'a2', 'b1'], 'B, running nothing, before A');
  await end('a2');
  t.same(started.at(-1), 'a4', "then A's webhook served longest ago (11 never started)");
  t.equal(q.pending, 2);
  t.equal(q.size, 1);
});

t.test('an organization running nothing starts beyond the places, up to the burst; others wait', async (t) => {
  const q = new FairQueue(1, 1);
  const { started, add, end } = harness(q);
  add('a1', 1, 10);
  add('a2', 1, 10);
  add('b1', 2, 20);
  add('c1', 3, 30);
  t.same(started, ['a1', 'b1'], 'B starts beyond the one place; A waits, and C waits for the burst');
  await end('b1');
  t.same(started, ['a1', 'b1', 'c1'], 'C, running nothing, takes the burst place B gave back');
});

t.test("a webhook's cap holds, and other webhooks take the free places", async (t) => {
  const q = new FairQueue(4, 0);
  const { started, add } = harness(q);
  for (let i = 0; i < 4; i++) add(`x${i}`, 1, 10, 2);
  add('y0', 1, 11);
  t.same(started.sort(), ['x0', 'x1', 'y0']);
});

t.test("a task that rejects frees its place, is told as 'failed', and idle follows", async (t) => {
  const q = new FairQueue(1, 0);
  const { started, add, end } = harness(q);
  const failed: unknown[] = [];
  q.on('failed', (err) => failed.push(err));
  add('a1', 1, 10);
  add('a2', 1, 10);
  await end('a1', true);
  t.same(started, ['a1', 'a2']);
  t.equal((failed[0] as Error).message, 'a1');
  const idle = q.onIdle();
  await end('a2');
  await idle;
  t.equal(q.pending + q.size, 0);
});

t.test('places are shared by time held: a webhook answering in 20 ms gets many turns for a 3 s one', async (t) => {
  let now = 0;
  const q = new FairQueue(1, 0, new ServiceLedger(() => now));
  const { started, add, end } = harness(q);
  for (let i = 0; i < 4; i++) add(`slow${i}`, 1, 10);
  for (let i = 0; i < 4; i++) add(`fast${i}`, 1, 11);
  t.same(started, ['slow0']);
  now += 3000;
  await end('slow0');
  t.same(started.at(-1), 'fast0', 'the fast webhook, served nothing yet, is next');
  for (let i = 0; i < 3; i++) {
    now += 20;
    await end(`fast${i}`);
  }
  t.same(started, ['slow0', 'fast0', 'fast1', 'fast2', 'fast3'], 'its 60 ms served is still far below the 3 s: it keeps the place');
  now += 20;
  await end('fast3');
  t.same(started.at(-1), 'slow1', 'with nothing else waiting the slow webhook takes the place again (work-conserving)');
});

t.test('organizations too: one whose attempts held places longer waits behind one that held them less', async (t) => {
  let now = 0;
  const q = new FairQueue(1, 0, new ServiceLedger(() => now));
  const { started, add, end } = harness(q);
  add('a1', 1, 10);
  now += 1000;
  await end('a1');
  add('b1', 2, 20);
  now += 10;
  await end('b1');
  add('z', 9, 90); // holds the one place while the others queue
  add('a2', 1, 11);
  add('b2', 2, 21);
  add('x', 3, 30);
  t.same(started, ['a1', 'b1', 'z']);
  now += 10;
  await end('z');
  t.same(started.at(-1), 'x', 'C, served nothing, first');
  now += 10;
  await end('x');
  t.same(started.at(-1), 'b2', 'then B (10 ms served) before A (1 s), though A asked first, through another webhook');
});

t.test('the ledger fades what was served by half each minute, and forgets what has faded away', async (t) => {
  let now = 0;
  const ledger = new ServiceLedger(() => now);
  ledger.charge(1, 10, 1000);
  t.equal(ledger.hookServed(10), 1000);
  now += 60_000;
  t.equal(Math.round(ledger.hookServed(10)), 500);
  t.equal(Math.round(ledger.orgServed(1)), 500);
  t.same(ledger.shares(), { hooks: [{ hook: 10, servedMs: 500, holdMs: 1000 }], orgs: [{ org: 1, servedMs: 500 }] });
  now += 600_000;
  t.same(ledger.shares(), { hooks: [], orgs: [] }, 'under 1 ms: forgotten');
  t.equal(ledger.holdMs(10), DEFAULT_HOLD_MS, 'a forgotten webhook is expected to hold the default again');
});
