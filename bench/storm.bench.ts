// Storm (SPEC §13): 10,000 deliveries through a real `wharf serve`, SIGKILLed and restarted
// three times, to a receiver failing a third of the time (500s, dropped connections,
// answers slower than WEBHOOK_TIMEOUT) and to a second webhook always answered 500. Prints the duplicates per kill and the deliveries
// lost or sent other than their schedule, as JSON lines. SQLite; Postgres when
// TEST_DATABASE_URL is set (the storm makes its database there, as the tests do).
import type { Bench } from './run.ts';
import { runStorm } from '../test/delivery/storm.ts';

const DELIVERIES = Number(process.env.BENCH_STORM_DELIVERIES ?? 10_000);
const KILLS = 3;
const CONCURRENCY = 64;

const bench: Bench = async (report) => {
  const teardowns: (() => unknown)[] = [];
  try {
    const f = await runStorm({ teardown: (fn) => teardowns.push(fn) }, { deliveries: DELIVERIES, kills: KILLS, concurrency: CONCURRENCY });
    const perKill = f.duplicate2xx / KILLS;
    const repeatsPerKill = f.repeats / KILLS;
    const base = { deliveries: f.deliveries, kills: f.kills, concurrency: f.concurrency, dialect: f.dialect, seconds: f.seconds };
    report({
      figure: `storm_duplicate_2xx_per_kill_${f.dialect}`,
      value: perKill,
      unit: 'duplicates',
      target: `≤ ${CONCURRENCY} (WEBHOOK_CONCURRENCY)`,
      met: perKill <= CONCURRENCY,
      ...base,
      duplicate_2xx: f.duplicate2xx,
    });
    report({
      figure: `storm_repeated_attempts_per_kill_${f.dialect}`,
      value: repeatsPerKill,
      unit: 'attempts',
      target: `≤ ${CONCURRENCY}`,
      met: repeatsPerKill <= CONCURRENCY,
      ...base,
      repeats: f.repeats,
    });
    const wrong = f.lost + f.misnumbered + f.failedShort + f.misrecorded + (f.deliveries - f.alwaysFailingExact);
    report({
      figure: `storm_lost_or_misscheduled_${f.dialect}`,
      value: wrong,
      unit: 'deliveries',
      target: '0',
      met: wrong === 0,
      ...base,
      lost: f.lost,
      misnumbered: f.misnumbered,
      failed_short: f.failedShort,
      misrecorded: f.misrecorded,
      always_failing_exact: f.alwaysFailingExact,
      succeeded: f.succeeded,
      failed: f.failed,
      requests: f.requests,
    });
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
};

export default bench;
