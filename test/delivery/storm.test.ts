import t from 'tap';
import { runStorm } from './storm.ts';

const CONCURRENCY = 32;
const KILLS = 3;
const BRANCHES = 1500;

t.test(
  'a push of 1,500 branches, its deliveries to a receiver failing a third of the time and to one always answering 500, 1 s time-outs, three SIGKILLs of wharf serve: none lost, no attempt skipped or counted unsent, duplicates within what was in flight',
  async (t) => {
    const f = await runStorm(t, { deliveries: BRANCHES, kills: KILLS, concurrency: CONCURRENCY, via: 'push' });
    t.comment(JSON.stringify(f));
    t.equal(f.succeeded + f.failed, 2 * BRANCHES, 'every delivery of both webhooks finished');
    t.ok(f.failed > BRANCHES && f.succeeded > 0, `some succeeded (${f.succeeded}), some failed for good (${f.failed})`);
    t.equal(f.lost, 0, 'every event got a 2xx or every scheduled attempt');
    t.equal(f.misnumbered, 0, 'every delivery was sent attempts 1..k, none skipped, none beyond');
    t.equal(f.failedShort, 0, 'every failed delivery was sent exactly the scheduled attempts');
    t.equal(f.misrecorded, 0, 'the recorded attempts are those whose requests reached the receiver');
    t.equal(f.alwaysFailingExact, BRANCHES, 'every delivery to the always-failing receiver: failed, 4 attempts recorded, 4 requests arrived');
    t.ok(f.repeats <= CONCURRENCY * KILLS, `attempts repeated: ${f.repeats} (at most ${CONCURRENCY} per kill)`);
    t.ok(f.duplicate2xx <= CONCURRENCY * KILLS, `duplicate 2xx: ${f.duplicate2xx} (at most ${CONCURRENCY} per kill)`);
  },
);
