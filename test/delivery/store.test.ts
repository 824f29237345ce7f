// The dispatcher's SQL (claim.ts, complete.ts) against the real database, on SQLite both
// on the dispatcher's own thread and on the main connection: what a claim hands over, and
// that only the lease holder's results are written.
import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { postgresUrl } from '../helpers/database.ts';
import { startReceiver } from './receiver.ts';
import { attemptResult as result, buildWebhook } from './build.ts';
import { connect, type Db } from '../../src/db/connect.ts';
import { claimDue } from '../../src/delivery/store/claim.ts';
import { recordResults } from '../../src/delivery/store/complete.ts';
import { mainConnectionRunner, sqliteFile, type SqliteRunner } from '../../src/delivery/store/sqlite.ts';
import { SqliteThread } from '../../src/delivery/store/sqliteThread.ts';
import type { TestLike } from '../helpers/wharf.ts';
import { quietPeriod } from '../helpers/wait.ts';

/** A stopped Wharf's database with an inactive webhook and three due deliveries; the bodies hold multi-byte characters. */
async function databaseWithDeliveries(t: TestLike) {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const hook = await buildWebhook(w, repo, rx, { active: false });
  await w.stop();
  const db = connect(w.database.url);
  t.teardown(() => db.destroy());
  const now = Date.now();
  const bodies = ['{"n":1,"text":"é ✓ 𝄞"}', '{"n":2}', '{"n":3,"text":"日本語"}'];
  for (const [i, payload] of bodies.entries()) {
    await db('deliveries').insert({
      webhook_id: hook.id,
      payload,
      guid: `00000000-0000-4000-8000-00000000000${i}`,
      event: 'ping',
      status: 'pending',
      attempts: 0,
      next_attempt_at: now - 1000,
      created_at: now - 1000,
    });
  }
  return { db, hook, bodies };
}

/** The ways the dispatcher runs its SQLite statements (Postgres has one way: its pool). */
function runners(db: Db, t: TestLike): [string, SqliteRunner | undefined][] {
  if (postgresUrl) return [['postgres', undefined]];
  const thread = new SqliteThread(sqliteFile(db)!);
  t.teardown(() => thread.close());
  return [
    ['the SQLite thread', thread.run],
    ['the main connection', mainConnectionRunner(db)],
  ];
}

for (const way of postgresUrl ? ['postgres'] : ['the SQLite thread', 'the main connection']) {
  t.test(`claim and result write (${way}): exact body bytes; only the lease holder's results are written`, async (t) => {
    const { db, hook, bodies } = await databaseWithDeliveries(t);
    const sqlite = new Map(runners(db, t)).get(way);
    const claimed = await claimDue(db, { owner: 'A', limit: 10, now: Date.now(), leaseMs: 60_000, firstDelayMs: 0, sqlite });
    t.equal(claimed.length, 3);
    t.same(claimed.map((c) => c.body.toString('utf8')).sort(), [...bodies].sort(), 'the bodies, byte for byte');
    t.ok(claimed.every((c) => Buffer.isBuffer(c.body) && c.attempt === 1 && c.claims === 1 && c.hookId === hook.id && c.url.endsWith('/hook')));
    t.same(await claimDue(db, { owner: 'B', limit: 10, now: Date.now(), leaseMs: 60_000, firstDelayMs: 0, sqlite }), [], 'leased rows are not claimed again');
    t.same(
      (await db('deliveries').distinct('attempts', 'claims')).map((r: any) => [Number(r.attempts), Number(r.claims)]),
      [[0, 1]],
      'a claim counts no attempt, only the claim',
    );

    const [first, second, third] = claimed.sort((a, b) => a.id - b.id);
    t.equal(await recordResults(db, 'B', [result(first.id, 1)], sqlite), 0, 'another owner writes nothing');
    t.equal(await recordResults(db, 'A', [result(third.id, 2)], sqlite), 0, 'nor does a result for another attempt');
    t.equal(await recordResults(db, 'A', [result(third.id, 1, { claims: 2 })], sqlite), 0, 'nor one of another claim');
    t.equal(Number((await db('delivery_attempts').count({ n: '*' }))[0].n), 0, 'and leaves no attempt row');

    const retry = Date.now() + 60_000;
    t.equal(
      await recordResults(
        db,
        'A',
        [result(first.id, 1), result(second.id, 1, { status: 'pending', nextAttemptAt: retry, statusCode: 500, responseBody: 'boom' })],
        sqlite,
      ),
      2,
    );
    const rows = await db('deliveries')
      .orderBy('id')
      .select('id', 'status', 'lease_owner', 'status_code', 'next_attempt_at', 'finished_at', 'attempts', 'claims');
    t.match(rows[0], { status: 'success', lease_owner: null, status_code: 200, next_attempt_at: null, attempts: 1, claims: 0 });
    t.ok(rows[0].finished_at > 0);
    t.match(rows[1], { status: 'pending', lease_owner: null, status_code: 500, next_attempt_at: retry, finished_at: null, attempts: 1, claims: 0 });
    t.match(rows[2], { status: 'pending', lease_owner: 'A', attempts: 0, claims: 1 }, 'the third is still leased, its attempt not counted');
    const attempts = await db('delivery_attempts').orderBy('delivery_id').select('delivery_id', 'attempt', 'status_code', 'request_headers', 'response_body');
    t.same(
      attempts.map((a: any) => [Number(a.delivery_id), a.attempt, a.status_code, a.response_body]),
      [
        [first.id, 1, 200, 'ok'],
        [second.id, 1, 500, 'boom'],
      ],
    );
    t.same(JSON.parse(attempts[0].request_headers), { 'x-service-delivery-attempt': '1' });
    t.equal(await recordResults(db, 'A', [result(first.id, 1)], sqlite), 0, 'a result is written once');
  });
}

if (!postgresUrl) {
  t.test('the SQLite thread: a failing statement rolls its whole transaction back; a closed thread starts again on the next call', async (t) => {
    const { db } = await databaseWithDeliveries(t);
    const thread = new SqliteThread(sqliteFile(db)!);
    t.teardown(() => thread.close());
    const bad = thread.run(
      [
        { sql: "UPDATE deliveries SET status = 'failed'", params: [], mode: 'run' },
        { sql: 'INSERT INTO no_such_table VALUES (1)', params: [], mode: 'run' },
      ],
      true,
    );
    await t.rejects(bad, { message: /no such table/, code: 'SQLITE_ERROR' });
    t.same(
      (await db('deliveries').distinct('status')).map((r: any) => r.status),
      ['pending'],
      'the first statement was rolled back',
    );
    await thread.close();
    const [rows] = (await thread.run([{ sql: 'SELECT count(*) AS n FROM deliveries WHERE status = ?', params: ['pending'], mode: 'all' }], false)) as any[][];
    t.same(rows, [{ n: 3 }]);
  });

  t.test('a transaction on the main connection that reads, then writes while the SQLite thread writes too: both succeed', async (t) => {
    const { db } = await databaseWithDeliveries(t);
    const thread = new SqliteThread(sqliteFile(db)!);
    t.teardown(() => thread.close());
    await thread.run([{ sql: 'SELECT 1', params: [], mode: 'all' }], false); // the thread is up
    const trx = await db.transaction();
    const [{ n }] = await trx('deliveries').count({ n: '*' });
    // The thread's write waits for the transaction (it holds the write lock from its start).
    const other = thread.run([{ sql: "UPDATE deliveries SET event = 'other' WHERE guid LIKE '%0'", params: [], mode: 'run' }], false);
    // A bounded pause: the thread's write blocked on the lock leaves no state to await; this lets it reach the lock before the transaction writes.
    await quietPeriod(50);
    await trx('deliveries')
      .where('guid', 'like', '%1')
      .update({ event: `seen ${n}` });
    await trx.commit();
    t.same(await other, [1]);
    t.same(
      (await db('deliveries').orderBy('id').select('event')).map((r: any) => r.event),
      ['other', 'seen 3', 'ping'],
    );
  });
}
