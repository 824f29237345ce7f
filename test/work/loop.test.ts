import { EventEmitter } from 'node:events';
import t from 'tap';
import { createWorkLoop, type Running, type WorkLoopOptions } from '../../src/work/loop.ts';
import { coalesce } from '../../src/work/coalesce.ts';
import type { TestLike } from '../helpers/wharf.ts';
import { isDeadPredecessor, nodeId, parseNodeId } from '../../src/work/nodeId.ts';

interface Gate<T = void> {
  promise: Promise<T>;
  open(value: T): void;
}

/** A promise with its resolver, to hold a fake claim or run until the test lets it go. */
function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** A loop over a fake queue of items: claims take what is queued, up to the limit. */
function fakeLoop(t: TestLike, over: Partial<WorkLoopOptions<string>> = {}) {
  const queued: string[] = [];
  const signals = new EventEmitter();
  const claims: number[] = [];
  let hold: Gate | null = null;
  const claimStarted = new EventEmitter();
  const ran: string[] = [];
  const loop = createWorkLoop<string>({
    async claim(limit) {
      // Reads the table first: what is queued while the claim then waits is not in its answer.
      const taken = queued.splice(0, limit);
      claims.push(limit);
      claimStarted.emit('claim');
      if (hold) await hold.promise;
      return taken;
    },
    async run(item) {
      ran.push(item);
    },
    slots: 2,
    wakeOn: { signals: [[signals, 'work']] },
    stopMode: 'drain',
    onError: (err) => {
      throw err;
    },
    ...over,
  });
  t.teardown(() => loop.stop());
  return {
    loop,
    queued,
    signals,
    claims,
    ran,
    /** Makes the next claims wait until the returned gate opens; resolves once one has started. */
    holdClaims() {
      const g = gate();
      hold = g;
      const started = new Promise<void>((resolve) => claimStarted.once('claim', () => resolve()));
      return { started, release: () => ((hold = null), g.open()) };
    },
  };
}

t.test('a burst of wakes during a claim costs one more claim, not one each', async (t) => {
  const f = fakeLoop(t);
  const held = f.holdClaims();
  f.loop.start();
  await held.started;
  for (let i = 0; i < 10; i++) f.signals.emit('work');
  held.release();
  await f.loop.idle();
  await f.loop.stop();
  t.equal(f.claims.length, 2, 'the first claim and one more for the whole burst');
});

t.test('work announced while a claim runs is claimed by the claim after it', async (t) => {
  const f = fakeLoop(t);
  const held = f.holdClaims();
  f.loop.start();
  await held.started;
  // Committed after the claim read the table: that claim cannot see it, only a wake says so.
  f.queued.push('late');
  f.signals.emit('work');
  held.release();
  await f.loop.idle();
  await f.loop.stop();
  t.same(f.ran, ['late'], 'the late item ran');
});

t.test('no more than `slots` items run at once; a freed slot claims again', async (t) => {
  const gates = new Map<string, Gate>();
  const started = new EventEmitter();
  const f = fakeLoop(t, {
    async run(item) {
      const g = gate();
      gates.set(item, g);
      started.emit('run', item);
      await g.promise;
    },
  });
  f.queued.push('a', 'b', 'c');
  const two = new Promise<void>((resolve) => started.on('run', () => gates.size === 2 && resolve()));
  f.loop.start();
  await two;
  t.equal(f.loop.running, 2);
  t.same(f.queued, ['c'], 'c waits for a slot');
  const third = new Promise<string>((resolve) => started.on('run', (item) => item === 'c' && resolve(item)));
  gates.get('a')!.open();
  t.equal(await third, 'c', 'the slot a freed took c');
  gates.get('b')!.open();
  gates.get('c')!.open();
  await f.loop.stop();
});

t.test('a running item has its lease renewed; a lost lease aborts it with the leaseLost reason', async (t) => {
  let renewals = 0;
  const enoughRenewals = gate();
  const aborted = gate<unknown>();
  const f = fakeLoop(t, {
    async renew() {
      renewals += 1;
      if (renewals === 3) enoughRenewals.open();
      return renewals < 3;
    },
    renewEveryMs: 5,
    reasons: { leaseLost: 'taken over' },
    async run(_item, { signal }: Running) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      aborted.open(signal.reason);
    },
  });
  f.queued.push('a');
  f.loop.start();
  await enoughRenewals.promise;
  t.equal(await aborted.promise, 'taken over');
  await f.loop.stop();
  t.equal(renewals, 3, 'no renewal after the lease was lost');
});

t.test('stop, draining: no new claim, and the running item finishes unaborted', async (t) => {
  const running = gate();
  const finish = gate();
  let signalSeen: AbortSignal | undefined;
  const f = fakeLoop(t, {
    async run(_item, { signal }) {
      signalSeen = signal;
      running.open();
      await finish.promise;
    },
  });
  f.queued.push('a');
  f.loop.start();
  await running.promise;
  const claimsBefore = f.claims.length;
  let stopped = false;
  const stop = f.loop.stop().then(() => (stopped = true));
  f.queued.push('b');
  f.signals.emit('work');
  await Promise.resolve();
  t.equal(stopped, false, 'stop waits for the running item');
  finish.open();
  await stop;
  t.equal(signalSeen!.aborted, false, 'not aborted');
  t.equal(f.claims.length, claimsBefore, 'no claim after stop');
  t.same(f.ran, []);
  t.same(f.queued, ['b']);
});

t.test('stop, aborting: running items see the stop reason; an item claimed during stop is given back, not run', async (t) => {
  const running = gate();
  const reasons: unknown[] = [];
  const givenBack: string[] = [];
  const f = fakeLoop(t, {
    slots: 3,
    stopMode: 'abort',
    reasons: { stop: 'shutdown' },
    async giveBack(item) {
      givenBack.push(item);
    },
    async run(item, { signal }) {
      f.ran.push(item);
      running.open();
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      reasons.push(signal.reason);
    },
  });
  f.queued.push('a');
  f.loop.start();
  await running.promise;
  const held = f.holdClaims();
  f.queued.push('b'); // found by the claim that is in progress when stop begins
  f.signals.emit('work');
  await held.started;
  const stop = f.loop.stop();
  held.release();
  await stop;
  t.same(reasons, ['shutdown'], 'the running item was aborted with the stop reason');
  t.same(f.ran, ['a']);
  t.same(givenBack, ['b'], 'b was claimed during stop and given back');
});

t.test('abort(key) stops one running item with the given reason', async (t) => {
  const started = gate();
  const reason = gate<unknown>();
  const f = fakeLoop(t, {
    async run(_item, { signal }) {
      started.open();
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      reason.open(signal.reason);
    },
  });
  f.queued.push('a');
  f.loop.start();
  await started.promise;
  t.equal(f.loop.abort('nope', 'canceled'), false);
  t.equal(f.loop.abort('a', 'canceled'), true);
  t.equal(await reason.promise, 'canceled');
  await f.loop.stop();
});

t.test('coalesce: a failing run is reported and a wake during it still runs again', async (t) => {
  const errors: unknown[] = [];
  let runs = 0;
  const first = gate();
  const held = gate();
  const c = coalesce(
    async () => {
      runs += 1;
      if (runs === 1) {
        first.open();
        await held.promise;
        throw new Error('boom');
      }
    },
    { onError: (err) => errors.push(err) },
  );
  c.wake();
  await first.promise;
  c.wake();
  c.wake();
  held.open();
  await c.idle();
  t.equal(runs, 2);
  t.equal(errors.length, 1);
  await c.stop();
});

t.test('node ids: one format, parsed back; a dead predecessor is told by host, pid and data dir', async (t) => {
  const self = nodeId('/srv/wharf/data');
  t.ok(self.length <= 64, 'fits deliveries.lease_owner');
  t.match(self, new RegExp(`:${process.pid}:`), 'carries the pid between colons');
  const parts = parseNodeId(self)!;
  t.equal(parts.pid, process.pid);
  const sibling = nodeId('/srv/wharf/data');
  t.not(sibling, self, 'two workers of one process differ');
  t.ok(isDeadPredecessor(sibling, self), 'an earlier worker of this very process counts as gone');
  const dead = `${parts.host}:999999999:${parts.dirTag}:00000000`;
  t.ok(isDeadPredecessor(dead, self, { sameDataDir: true }), 'a pid that no longer runs, same data dir');
  t.notOk(isDeadPredecessor(nodeId('/other/data').replace(`:${process.pid}:`, ':999999999:'), self, { sameDataDir: true }), 'another data dir is another node');
  t.ok(isDeadPredecessor(`${parts.host}:999999999:abcd1234`, self), 'ids of the earlier format read');
  t.notOk(isDeadPredecessor(`elsewhere:999999999:abcd1234`, self), 'another host is never swept');
  t.notOk(isDeadPredecessor(`${parts.host}:1:${parts.dirTag}:00000000`, self), 'a live process (pid 1) is not swept');
  t.notOk(isDeadPredecessor(self, self));
});
