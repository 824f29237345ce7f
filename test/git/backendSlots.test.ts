import t from 'tap';
import { BackendSlots } from '../../src/transport/git/backendLimits.ts';
import { classify } from '../../src/http/classify.ts';

/** Whether a promise has settled by the time queued work has run (p-queue starts work on a microtask). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

t.test('an anonymous address holds at most half the slots; others still get theirs', async (t) => {
  const slots = new BackendSlots(4);
  t.equal(slots.perAddress, 2);
  const a1 = await slots.acquire('192.0.2.1');
  const a2 = await slots.acquire('192.0.2.1');
  const a3 = slots.acquire('192.0.2.1');
  t.notOk(await settled(a3), 'a third request of the same address waits although two slots are free');
  t.equal(slots.entered('192.0.2.1'), 2);
  const b1 = slots.acquire('192.0.2.2');
  const signedIn = slots.acquire();
  t.ok(await settled(b1), 'another address gets a slot at once');
  t.ok(await settled(signedIn), 'so does a signed-in client');
  a1();
  a1(); // giving back twice frees one slot only
  t.ok(await settled(a3), 'the waiting request of that address goes once one of its own is given back');
  const a4 = slots.acquire('192.0.2.1');
  t.notOk(await settled(a4));
  const waiting = Array.from({ length: slots.waitingPerAddress - 1 }, () => slots.acquire('192.0.2.1'));
  const refused = await slots.acquire('192.0.2.1').then(
    () => null,
    (err: unknown) => err,
  );
  t.match(refused, { code: 'rate_limited' }, 'past its waiting share the address is refused');
  t.equal(classify(refused).status, 429, 'as a 429');
  for (const release of [a2, await a3, await b1, await signedIn]) release();
  for (const next of [a4, ...waiting]) (await next)();
  t.equal(slots.entered('192.0.2.1'), 0, 'everything given back');
});

t.test('one slot: an anonymous address still gets it, its other requests queue', async (t) => {
  const slots = new BackendSlots(1);
  t.equal(slots.perAddress, 1);
  const first = await slots.acquire('192.0.2.1');
  const second = slots.acquire('192.0.2.1');
  t.notOk(await settled(second));
  first();
  (await second)();
  t.equal(slots.entered('192.0.2.1'), 0);
});
