import t from 'tap';
import { anonymousKey, BackendSlots } from '../../src/transport/git/backendLimits.ts';
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

t.test('anonymous requests together hold at most half the slots; signed-in clients always get the rest', async (t) => {
  const slots = new BackendSlots(4);
  t.equal(slots.anonymousLimit, 2);
  const a1 = await slots.acquire('192.0.2.1');
  const a2 = await slots.acquire('192.0.2.1');
  t.equal(slots.entered('192.0.2.1'), 2, 'one address may take the whole anonymous half while nobody else waits');
  const a3 = slots.acquire('192.0.2.1');
  t.notOk(await settled(a3), 'a third anonymous request waits although two slots are free');
  const b1 = slots.acquire('192.0.2.2');
  t.notOk(await settled(b1), 'another anonymous address waits too: the anonymous half is taken');
  const others = Array.from({ length: 20 }, (_, i) => slots.acquire(`198.51.100.${i + 1}`));
  const signedIn = [slots.acquire(), slots.acquire()];
  for (const s of signedIn) t.ok(await settled(s), 'a signed-in client gets a slot at once, whatever number of anonymous addresses wait');
  a1();
  a1(); // giving back twice frees one slot only
  t.notOk(await settled(a3), 'the address that held the half waits its turn behind the others');
  t.ok(await settled(b1), 'a place given back goes to the waiting address holding the fewest');
  a2();
  t.ok(await settled(a3), 'among addresses holding none, the first in line goes');
  t.notOk(await settled(others[0]));
  (await b1)();
  t.ok(await settled(others[0]), 'then an address holding none, before the first address gets a second place');
  const a4 = slots.acquire('192.0.2.1');
  const waiting = Array.from({ length: slots.waitingPerAddress - 1 }, () => slots.acquire('192.0.2.1'));
  const refused = await slots.acquire('192.0.2.1').then(
    () => null,
    (err: unknown) => err,
  );
  t.match(refused, { code: 'rate_limited' }, 'past its waiting share the address is refused');
  t.equal(classify(refused).status, 429, 'as a 429');
  for (const s of signedIn) (await s)();
  // Giving each place back lets the next one in; every request gets a slot in the end.
  const all = [others[0], a3, ...others.slice(1), a4, ...waiting];
  const released = new Set<Promise<() => void>>();
  while (released.size < all.length) {
    for (const p of all) {
      if (released.has(p) || !(await settled(p))) continue;
      released.add(p);
      (await p)();
    }
  }
  t.equal(slots.entered('192.0.2.1'), 0, 'everything given back');
  t.ok(await settled(slots.acquire('192.0.2.9')), 'and the anonymous half is free again');
});

t.test('an IPv6 client is counted by its /64', async (t) => {
  t.equal(anonymousKey('2001:db8:1:2::1'), anonymousKey('2001:db8:1:2:ffff:ffff:ffff:ffff'));
  t.not(anonymousKey('2001:db8:1:2::1'), anonymousKey('2001:db8:1:3::1'));
  t.equal(anonymousKey('::ffff:192.0.2.7'), '192.0.2.7', 'an IPv4-mapped address is its IPv4 address');
  t.equal(anonymousKey('192.0.2.7'), '192.0.2.7');
  const slots = new BackendSlots(4);
  const held = [await slots.acquire('2001:db8:1:2::1'), await slots.acquire('2001:db8:1:2::2')];
  t.equal(slots.entered('2001:db8:1:2::99'), 2, 'every address of the /64 counts as one client');
  t.notOk(await settled(slots.acquire('2001:db8:1:2::3')), 'a new address of the same /64 waits');
  for (const release of held) release();
});

t.test('one slot: an anonymous address still gets it, its other requests queue', async (t) => {
  const slots = new BackendSlots(1);
  t.equal(slots.anonymousLimit, 1);
  const first = await slots.acquire('192.0.2.1');
  const second = slots.acquire('192.0.2.1');
  t.notOk(await settled(second));
  first();
  (await second)();
  t.equal(slots.entered('192.0.2.1'), 0);
});
