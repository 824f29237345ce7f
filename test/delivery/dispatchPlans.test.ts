// Postgres plans the dispatcher's result write and its claim once per connection. Planned
// while `deliveries` was small (a fresh install's first push), the plans must still find
// each row by its key once the table holds thousands: a result write that scans the table
// instead cost 14.6 ms for a 40-row write where the key takes 2.7 ms (store/postgres.ts); a
// claim that looked up each picked delivery through the due index walked every due row
// once per row it locked, 7-25 ms a claim of 32 with 2,000-4,000 due (nodes bench).
import t, { type Test } from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { postgresUrl } from '../helpers/database.ts';
import { startReceiver } from './receiver.ts';
import { attemptResult, buildWebhook } from './build.ts';
import { connect, type Db } from '../../src/db/connect.ts';
import { recordResults } from '../../src/delivery/store/complete.ts';
import { claimDue } from '../../src/delivery/store/claim.ts';
import { dispatchConnections } from '../../src/delivery/store/postgres.ts';

const OWNER = 'node-a';

/** `count` deliveries leased by OWNER for their first attempt, created in one statement; their ids. */
async function leased(db: Db, hookId: number, count: number): Promise<number[]> {
  const now = Date.now();
  const rows = await db.raw<{ rows: { id: number }[] }>(
    `INSERT INTO deliveries (webhook_id, payload, guid, event, status, attempts, claims, lease_owner, next_attempt_at, created_at)
     SELECT ?, '{}', gen_random_uuid()::text, 'ping', 'pending', 0, 1, ?, ?, ? FROM generate_series(1, ?) RETURNING id`,
    [hookId, OWNER, now + 600_000, now, count],
  );
  return rows.rows.map((r) => Number(r.id));
}

/** `count` deliveries due now for their first attempt, never claimed, created in one statement. */
async function due(db: Db, hookId: number, count: number): Promise<void> {
  const now = Date.now();
  await db.raw(
    `INSERT INTO deliveries (webhook_id, payload, guid, event, status, attempts, claims, next_attempt_at, created_at)
     SELECT ?, '{}', gen_random_uuid()::text, 'ping', 'pending', 0, 0, ?, ? FROM generate_series(1, ?)`,
    [hookId, now - 1000, now - 1000, count],
  );
}

const POSTGRES_ONLY = postgresUrl ? false : 'the plan is Postgres’s (set TEST_DATABASE_URL); SQLite plans each statement when it is prepared';

/** A stopped Wharf's database with one inactive webhook (nothing else claims or writes), opened for the test. */
async function stoppedWithWebhook(t: Test): Promise<{ db: Db; hook: { id: number } }> {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const hook = await buildWebhook(w, repo, await startReceiver(t), { active: false });
  await w.stop();
  const db = connect(w.database.url);
  t.teardown(() => db.destroy());
  return { db, hook };
}

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function nodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  return [plan, ...((plan.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(nodes)];
}

/**
 * Every node of the plan the dispatcher's connection used last (the pool hands it back)
 * keeps for `execute`, an EXECUTE of one of its prepared statements.
 */
async function keptPlan(db: Db, execute: string): Promise<Record<string, unknown>[]> {
  const client = await dispatchConnections(db).connect();
  try {
    const explained = await client.query(`EXPLAIN (FORMAT JSON) ${execute}`);
    return nodes(explained.rows[0]['QUERY PLAN'][0].Plan);
  } finally {
    client.release();
  }
}

t.test('a result write planned on a small deliveries table finds its rows by key once the table is large', { skip: POSTGRES_ONLY }, async (t) => {
  const { db, hook } = await stoppedWithWebhook(t);

  // Six writes while the table is small: after five, Postgres keeps a plan for the connection.
  const small = await leased(db, hook.id, 300);
  for (let i = 0; i < 6; i++) {
    const batch = small.slice(i * 5, i * 5 + 5);
    t.equal(
      await recordResults(
        db,
        OWNER,
        batch.map((id) => attemptResult(id, 1)),
      ),
      5,
      `write ${i + 1} records its 5 results`,
    );
  }
  const large = await leased(db, hook.id, 5000);

  // The same connection explains the next write.
  const ids = large.slice(0, 40);
  const n = ids.length;
  const list = (value: string) => `'{${Array(n).fill(value).join(',')}}'`;
  const args = [
    `'{${ids.join(',')}}'`,
    list('1'),
    list('success'),
    list('NULL'),
    list('200'),
    list('NULL'),
    list('5'),
    list(String(Date.now())),
    list(String(Date.now())),
    list('"{}"'),
    list('NULL'),
    list('ok'),
    list('1'),
    `'${OWNER}'`,
  ];
  const plan = await keptPlan(db, `EXECUTE wharf_write_results_claims(${args.join(', ')})`);
  const onDeliveries = plan.filter((p) => p['Relation Name'] === 'deliveries' && p['Node Type'] !== 'ModifyTable');
  t.same(
    onDeliveries.map((p) => [p['Node Type'], p['Index Name']]),
    [['Index Scan', 'deliveries_pkey']],
    'the deliveries are found through the primary key, not by a scan of the table',
  );
});

t.test('a claim planned on a small deliveries table locks the deliveries it picked by key once the table is large', { skip: POSTGRES_ONLY }, async (t) => {
  const { db, hook } = await stoppedWithWebhook(t);

  // Six claims while the table is small: after five, Postgres keeps a plan for the connection.
  await due(db, hook.id, 60);
  for (let i = 0; i < 6; i++) {
    const claimed = await claimDue(db, { owner: OWNER, limit: 5, now: Date.now(), leaseMs: 600_000, firstDelayMs: 0 });
    t.equal(claimed.length, 5, `claim ${i + 1} takes 5 deliveries`);
  }
  await due(db, hook.id, 5000);

  // The same connection explains the next claim.
  const plan = await keptPlan(db, `EXECUTE wharf_claim_due('${OWNER}', ${Date.now() + 600_000}, ${Date.now()}, 32, false, '[]', '[]')`);
  const locked = plan.filter((p) => p['Relation Name'] === 'deliveries' && p.Alias === 'd');
  t.same(
    locked.map((p) => [p['Node Type'], p['Index Name']]),
    [['Index Scan', 'deliveries_pkey']],
    'each picked delivery is locked through the primary key, not found again among every due one',
  );
});
