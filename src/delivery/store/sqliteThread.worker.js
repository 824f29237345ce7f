// The thread side of sqliteThread.ts: runs the dispatcher's SQLite statements on a
// connection of its own, so their CPU time is not taken from the event loop. Plain
// JavaScript, as worker threads do not inherit the TypeScript loader. It knows nothing
// of deliveries: each message is a list of statements, run in order, optionally as one
// transaction that takes the write lock at its start (BEGIN IMMEDIATE).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.filename);
for (const pragma of workerData.pragmas) db.pragma(pragma);
// Waiting here blocks only this thread; the main connection's transactions may hold the
// write lock across awaits, so the wait may be long.
db.pragma(`busy_timeout = ${workerData.busyTimeoutMs}`);

const statements = new Map();

/** The statement for `sql`, prepared once. */
function statement(sql) {
  let stmt = statements.get(sql);
  if (!stmt) {
    if (statements.size > 500) statements.clear();
    statements.set(sql, (stmt = db.prepare(sql)));
  }
  return stmt;
}

/** Runs each step: 'all' gives the rows, 'run' the number of rows changed. */
function runSteps(steps) {
  return steps.map(({ sql, params, mode }) => {
    const stmt = statement(sql);
    const args = Array.isArray(params) ? params : [params];
    return mode === 'all' ? stmt.all(...args) : stmt.run(...args).changes;
  });
}

const inTransaction = db.transaction(runSteps);

/**
 * Closes the database while this thread's environment is still alive (db.close()
 * finalizes every statement, then the connection; a native statement left for the garbage
 * collector at the thread's teardown is what aborted the older driver on Node 24), then
 * lets the thread exit.
 */
function close() {
  statements.clear();
  db.close();
  parentPort.close();
}

parentPort.on('message', ({ id, steps, transaction, close: closing }) => {
  if (closing) return close();
  try {
    parentPort.postMessage({ id, results: transaction ? inTransaction.immediate(steps) : runSteps(steps) });
  } catch (err) {
    parentPort.postMessage({ id, error: { message: String(err?.message ?? err), code: err?.code } });
  }
});
