import { Worker } from 'node:worker_threads';
import type { SqliteRunner, SqlStep } from './sqlite.ts';
import { SQLITE_PRAGMAS } from '../../db/connect.ts';

/**
 * The dispatcher's SQLite statements on a thread of their own (sqliteThread.worker.js),
 * with a connection of its own to the same file. Claims and result writes are most of
 * what the dispatcher spends besides HTTP; there they run beside the event loop instead
 * of on it. SQLite's locks keep the two connections apart: the thread's writes are single
 * statements or IMMEDIATE transactions, and so are the main connection's (connect.ts).
 * A thread that dies fails the calls in flight (their deliveries are sent again when
 * their leases run out) and is started afresh on the next call.
 */
export class SqliteThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (r: unknown[]) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  constructor(
    private readonly filename: string,
    private readonly busyTimeoutMs = 60_000,
  ) {}

  /** Runs the steps in order, as one transaction if asked; resolves with each step's result. */
  readonly run: SqliteRunner = (steps: SqlStep[], transaction: boolean) =>
    new Promise((resolve, reject) => {
      const id = this.nextId++;
      const worker = this.thread();
      // While a call is out, the thread keeps the process alive (a stop's last writes finish).
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, steps, transaction });
    });

  /**
   * Ends the thread: it finishes the call it is running, closes its database (every
   * statement first, then the connection) and exits; calls still queued fail. A thread
   * that does not exit within `graceMs` is terminated.
   */
  async close(graceMs = 5_000): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage({ close: true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    if ((await Promise.race([exited, late])) === 'late') await worker.terminate();
    clearTimeout(timer);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./sqliteThread.worker.js', import.meta.url), {
      workerData: { filename: this.filename, busyTimeoutMs: this.busyTimeoutMs, pragmas: SQLITE_PRAGMAS },
      execArgv: [],
    });
    worker.on('message', (m: { id: number; results?: unknown[]; error?: { message: string; code?: string } }) => {
      const call = this.pending.get(m.id);
      if (!call) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.error) call.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else call.resolve(m.results!);
    });
    const gone = (err: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const call of this.pending.values()) call.reject(err);
      this.pending.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite thread stopped (exit code ${code})`)));
    // Idle, it keeps no process alive; close() ends it.
    worker.unref();
    return (this.worker = worker);
  }
}
