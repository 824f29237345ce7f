import pg from 'pg';
import type { Db } from '../../db/connect.ts';
import { affected } from '../../db/results.ts';

/** Connections of the dispatcher's own pool: its result writers, its claim loop and what it gives back, side by side. */
const DISPATCH_CONNECTIONS = 8;

/**
 * The planner settings of the dispatcher's connections. Its statements find their rows by
 * index (a claim by the due and lease indexes, a result write by primary key), and only
 * stale statistics make a sequential scan look cheaper: a statement planned once per
 * connection while `deliveries` was small (the first chunk of a fresh install's first big
 * push) keeps that plan as the table grows, and a result write of 40 rows then scanned
 * every leased row and joined each with the batch, 14.6 ms instead of 2.7 ms for a
 * 5,000-row table (test/delivery/dispatchPlans.test.ts shows the plan). With sequential
 * scans off, the planner takes the index wherever there is one.
 */
const DISPATCH_PLANNER = '-c enable_seqscan=off';

/** By Knex client, which a handle and its transactions share. */
const pools = new WeakMap<object, pg.Pool>();

/**
 * The pool the dispatcher's hot statements run on, one per database handle, opened on
 * first use: connections of their own, so their planner settings reach nothing else.
 */
export function dispatchConnections(db: Db): pg.Pool {
  let pool = pools.get(db.client);
  if (!pool) {
    const connection = db.client.config.connection as string | pg.PoolConfig;
    pool = new pg.Pool({
      ...(typeof connection === 'string' ? { connectionString: connection } : connection),
      max: DISPATCH_CONNECTIONS,
      options: DISPATCH_PLANNER,
      idleTimeoutMillis: 30_000,
      // As long as Knex's pool waits for a connection: a claim or write fails, and is tried again, rather than wait forever.
      connectionTimeoutMillis: 60_000,
      allowExitOnIdle: true,
    });
    // An idle connection lost (the server restarted or ended it): the pool drops it and opens another when asked.
    pool.on('error', () => {});
    pools.set(db.client, pool);
  }
  return pool;
}

/** Closes the dispatcher's pool of a database handle (opened again if a statement comes after). */
export async function closeDispatchConnections(db: Db): Promise<void> {
  const pool = pools.get(db.client);
  if (!pool) return;
  pools.delete(db.client);
  await pool.end();
}

/**
 * Runs one of the dispatcher's hot statements on one of its connections as a named
 * (prepared) statement: node-postgres prepares it once per connection and later calls
 * only bind and execute, so Postgres does not plan it again on every claim or result
 * write. Statements given a name must keep the same text (the name stands for it).
 * `R` is the row the statement returns, as node-postgres gives it.
 */
export async function preparedQuery<R = unknown>(db: Db, name: string, text: string, values: unknown[]): Promise<{ rows: R[]; rowCount: number }> {
  const result = await dispatchConnections(db).query({ name, text, values });
  return { rows: result.rows as R[], rowCount: affected(result) };
}
