import t from 'tap';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { attemptsByGuid, startFleet, upTo } from './fleet.ts';

const CONCURRENCY = 8;
const SCHEDULE = '0s,1s,1s,1s';

t.test('SIGKILL mid-delivery to a receiver that always fails: every delivery is sent exactly the scheduled attempts, and they are recorded', async (t) => {
  const rx = await startReceiver(t, () => ({ status: 500, delayMs: 30 }));
  const fleet = await startFleet(t, { WEBHOOK_CONCURRENCY: String(CONCURRENCY), WEBHOOK_RETRY_SCHEDULE: SCHEDULE, WEBHOOK_TIMEOUT: '1s' }, rx.url);
  await fleet.raise(300);
  await waitFor(() => attemptsByGuid(rx.received).size >= 120, { what: 'the deliveries to be under way', timeoutMs: 60_000 });
  await fleet.first.kill();
  const atKill = rx.received.length;
  await fleet.serve();
  await waitFor(
    async () => {
      const c = await fleet.counts();
      return c.total === 300 && c.pending === 0;
    },
    { what: 'every delivery to have failed for good', timeoutMs: 120_000 },
  );
  const rows = await fleet.deliveries();
  t.ok(
    rows.every((r) => r.status === 'failed'),
    'every delivery failed for good',
  );

  const seen = attemptsByGuid(rx.received);
  t.equal(seen.size, 300, 'the receiver saw every delivery');
  const wrong = [...seen].filter(([, a]) => JSON.stringify([...new Set(a)].sort((x, y) => x - y)) !== JSON.stringify(upTo(4)));
  t.same(wrong.slice(0, 5), [], `every delivery was sent attempts 1 to 4, none skipped, none beyond (${wrong.length} were not)`);
  // Only attempts in flight at the kill may be repeated.
  const repeats = [...seen.values()].reduce((n, a) => n + a.length - new Set(a).size, 0);
  t.ok(repeats <= CONCURRENCY, `attempts repeated after the kill: ${repeats} (at most ${CONCURRENCY}, what was in flight)`);
  const misrecorded = rows.filter((r) => r.attempts !== 4 || JSON.stringify(r.recorded) !== JSON.stringify(upTo(4)));
  t.same(misrecorded.slice(0, 5), [], `every delivery records 4 attempts, numbered 1 to 4 (${misrecorded.length} do not)`);
  t.comment(`${atKill} requests before the kill, ${rx.received.length} in all, ${repeats} repeated`);
});
