// Three real `wharf serve` processes on one Postgres database (SPEC §10): they share the
// deliveries through FOR UPDATE SKIP LOCKED claims and leases.
import t from 'tap';
import { postgresUrl } from '../helpers/database.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { attemptsByGuid, startFleet } from '../delivery/fleet.ts';

const CONCURRENCY = 8;
const N = 600;

t.test(
  'three nodes on one Postgres: a node killed mid-delivery leaves its work to the others after the lease; no delivery is attempted by two nodes at once',
  { skip: postgresUrl ? false : 'several nodes need one shared Postgres database (set TEST_DATABASE_URL); SQLite is one node' },
  async (t) => {
    const inFlight = new Set<string>();
    let overlaps = 0;
    const rx = await startReceiver(t, (r) => {
      if (r.event === 'ping') return { status: 200 };
      if (inFlight.has(r.guid)) overlaps++;
      inFlight.add(r.guid);
      setTimeout(() => inFlight.delete(r.guid), 40);
      // A quarter of the first attempts fail, so retries move between the nodes too.
      return { status: r.attempt === 1 && r.guid.charCodeAt(0) % 4 === 0 ? 500 : 200, delayMs: 40 };
    });
    const fleet = await startFleet(
      t,
      { WEBHOOK_CONCURRENCY: String(CONCURRENCY), WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s', WEBHOOK_TIMEOUT: '1s', LOG_LEVEL: 'info' },
      rx.url,
    );
    const [b, c] = await Promise.all([fleet.serve(), fleet.serve()]);
    const a = fleet.first;
    await fleet.raise(N);
    const succeeded = () =>
      new Set(rx.received.filter((r) => r.event !== 'ping' && !(r.attempt === 1 && r.guid.charCodeAt(0) % 4 === 0)).map((r) => r.guid)).size;
    await waitFor(() => succeeded() >= N / 3 && b.attemptsLogged() > 0, { what: 'a third of the deliveries to succeed', timeoutMs: 120_000 });
    await b.kill();
    const killedAt = Date.now();
    const byB = b.attemptsLogged();
    await waitFor(
      async () => {
        const c = await fleet.counts();
        return c.total === N && c.pending === 0;
      },
      { what: 'every delivery to finish on the two nodes left', timeoutMs: 120_000 },
    );
    const rows = await fleet.deliveries();
    t.ok(
      rows.every((r) => r.status === 'success'),
      'every delivery succeeded',
    );

    t.equal(overlaps, 0, 'no delivery was in flight twice at once');
    const seen = attemptsByGuid(rx.received);
    t.equal(seen.size, N, 'every delivery arrived');
    const repeated = [...seen].filter(([, attempts]) => attempts.length !== new Set(attempts).size);
    t.ok(repeated.length <= CONCURRENCY, `attempt numbers repeated only for what node B had in flight: ${repeated.length} deliveries (at most ${CONCURRENCY})`);
    // The repeats are node B's attempts in flight, made again by the others once B's lease ran out (3 × WEBHOOK_TIMEOUT + 5 s after B's claim).
    const again = repeated.map(([guid]) => rx.received.filter((r) => r.guid === guid).at(-1)!.at - killedAt);
    t.ok(
      again.every((ms) => ms > 1_000),
      `node B's attempts were taken over after its lease ran out (${again.join(', ')} ms after the kill)`,
    );
    t.ok(
      rows.every((r) => r.attempts === new Set(seen.get(r.guid)).size),
      'each delivery records the attempts the receiver saw',
    );
    t.ok(a.attemptsLogged() > 0 && byB > 0 && c.attemptsLogged() > 0, `all three nodes delivered (${a.attemptsLogged()}, ${byB}, ${c.attemptsLogged()})`);
    t.comment(`node B killed with ${byB} attempts made; the others finished ${Math.round((Date.now() - killedAt) / 1000)} s later`);
  },
);
