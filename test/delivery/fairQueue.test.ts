import t from 'tap';
import { FairQueue } from '../../src/delivery/fairQueue.ts';

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
