import t from 'tap';
import { HOUSEKEEPING_CONCURRENCY, housekeepingQueue } from '../../src/pushes/housekeeping.ts';

// The queue every landed push hands its repository's gc --auto and pack-refs to
// (pushes/land.ts); packRefs.test.ts shows them run on real pushes.

/** A run that records what ran and how many at once, each held until `release` is called. */
function heldRuns() {
  const ran: Array<[string, boolean]> = [];
  const holds: Array<() => void> = [];
  let running = 0;
  let most = 0;
  const run = async (dir: string, packRefs: boolean) => {
    ran.push([dir, packRefs]);
    most = Math.max(most, ++running);
    await new Promise<void>((resolve) => holds.push(resolve));
    running--;
  };
  const release = () => holds.splice(0).forEach((resolve) => resolve());
  return { run, ran, release, most: () => most };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('pushes to many repositories run their housekeeping a few at a time, every one of them', async (t) => {
  const runs = heldRuns();
  const queue = housekeepingQueue(runs.run);
  const fail = () => t.fail('no run fails');
  for (let i = 0; i < 10; i++) queue.schedule(`/repos/r${i}.git`, false, fail);
  await tick();
  t.equal(runs.ran.length, HOUSEKEEPING_CONCURRENCY, `${HOUSEKEEPING_CONCURRENCY} start at once, the rest wait`);
  while (runs.ran.length < 10) {
    runs.release();
    await tick();
  }
  runs.release();
  await queue.idle();
  t.equal(runs.most(), HOUSEKEEPING_CONCURRENCY, 'never more at once');
  t.same(runs.ran.map(([dir]) => dir).sort(), [...Array(10).keys()].map((i) => `/repos/r${i}.git`).sort(), 'each repository once');
});

t.test('pushes to a repository that waits its turn add one run, with pack-refs if any of them asked; one after it started adds another', async (t) => {
  const runs = heldRuns();
  const queue = housekeepingQueue(runs.run, 1);
  const fail = () => t.fail('no run fails');
  queue.schedule('/repos/busy.git', false, fail); // starts at once and is held
  await tick();
  for (const packRefs of [false, true, false]) queue.schedule('/repos/app.git', packRefs, fail);
  queue.schedule('/repos/busy.git', false, fail); // busy.git has started: its new objects need a run of their own
  runs.release();
  await tick();
  runs.release();
  await tick();
  runs.release();
  await queue.idle();
  t.same(runs.ran, [
    ['/repos/busy.git', false],
    ['/repos/app.git', true],
    ['/repos/busy.git', false],
  ]);
});

t.test("a run that fails is reported to its push's handler and the queue goes on", async (t) => {
  const errors: string[] = [];
  const ran: string[] = [];
  const queue = housekeepingQueue(async (dir) => {
    ran.push(dir);
    if (dir.includes('broken')) throw new Error(`gc failed in ${dir}`);
  }, 1);
  queue.schedule('/repos/broken.git', false, (err) => errors.push((err as Error).message));
  queue.schedule('/repos/fine.git', false, () => errors.push('fine.git must not fail'));
  await queue.idle();
  t.same(ran, ['/repos/broken.git', '/repos/fine.git']);
  t.same(errors, ['gc failed in /repos/broken.git']);
});
