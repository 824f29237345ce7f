import t from 'tap';
import { runStorm } from './storm.ts';

const CONCURRENCY = 32;
const KILLS = 3;

t.test(
  'a storm of 3,000 deliveries to a receiver failing a third of the time, three SIGKILLs of wharf serve: none lost, no attempt skipped, duplicates within what was in flight',
  async (t) => {
    const f = await runStorm(t, { deliveries: 3000, kills: KILLS, concurrency: CONCURRENCY });
    t.comment(JSON.stringify(f));
    t.equal(f.succeeded + f.failed, 3000, 'every delivery finished');
    t.ok(f.failed > 0 && f.succeeded > 0, `some succeeded (${f.succeeded}), some failed for good (${f.failed})`);
    t.equal(f.lost, 0, 'every event got a 2xx or every scheduled attempt');
    t.equal(f.misnumbered, 0, 'every delivery was sent attempts 1..k, none skipped, none beyond');
    t.equal(f.failedShort, 0, 'every failed delivery was sent exactly the scheduled attempts');
    t.equal(f.misrecorded, 0, 'the recorded attempts are those the receiver saw');
    t.ok(f.repeats <= CONCURRENCY * KILLS, `attempts repeated: ${f.repeats} (at most ${CONCURRENCY} per kill)`);
    t.ok(f.duplicate2xx <= CONCURRENCY * KILLS, `duplicate 2xx: ${f.duplicate2xx} (at most ${CONCURRENCY} per kill)`);
  },
);
