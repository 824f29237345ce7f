import { EventEmitter } from 'node:events';

/** Work for the fair queue: whose it is (organization, webhook, its cap) and what to run. */
export interface FairTask {
  org: number;
  hook: number;
  /** The webhook's max_concurrency, or null. */
  cap: number | null;
  run: () => Promise<void>;
}

interface Waiting {
  running: number;
  /** When it last started a task (a sequence number; 0: never): among equals, the one served longest ago goes first. */
  served: number;
  tasks: FairTask[];
}

interface OrgLine {
  running: number;
  served: number;
  /** Its webhooks, each with what waits and what runs. */
  hooks: Map<number, Waiting>;
  waiting: number;
}

/**
 * The dispatcher's local queue: runs at most `concurrency` tasks at once, and starts the
 * next from the organization running the fewest, then its webhook running the fewest
 * (first come, first served within a webhook), never past a webhook's cap. An
 * organization with nothing running may start one more even when every place is taken
 * (up to `burst` beyond `concurrency`): a newcomer never waits behind another tenant's
 * slow receivers, whose attempts may hold every place for up to WEBHOOK_TIMEOUT.
 *
 * Written here rather than with p-queue (kept for the Git backend's slots): p-queue
 * runs in order of arrival or of a priority fixed when a task is added, and fairness here
 * depends on what runs at the moment a place frees. Emits 'next' when a task ends and
 * 'idle' when nothing runs or waits, as p-queue does.
 */
export class FairQueue extends EventEmitter {
  private readonly orgs = new Map<number, OrgLine>();
  private waitingCount = 0;
  private starts = 0;
  private runningCount = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly burst: number,
  ) {
    super();
  }

  /** Tasks waiting for a place. */
  get size(): number {
    return this.waitingCount;
  }

  /** Tasks running. */
  get pending(): number {
    return this.runningCount;
  }

  /** Queues a task; it starts as soon as its turn and a place come. A rejection frees the place and is emitted as 'failed'. */
  add(task: FairTask): void {
    let org = this.orgs.get(task.org);
    if (!org) this.orgs.set(task.org, (org = { running: 0, served: 0, hooks: new Map(), waiting: 0 }));
    let hook = org.hooks.get(task.hook);
    if (!hook) org.hooks.set(task.hook, (hook = { running: 0, served: 0, tasks: [] }));
    hook.tasks.push(task);
    org.waiting++;
    this.waitingCount++;
    this.pump();
  }

  /** Resolves when nothing runs or waits. */
  onIdle(): Promise<void> {
    if (this.runningCount === 0 && this.waitingCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    for (;;) {
      const full = this.runningCount >= this.concurrency;
      if (full && this.runningCount >= this.concurrency + this.burst) return;
      const next = this.pick(full);
      if (!next) return;
      this.start(next.org, next.orgId, next.hook, next.hookId);
    }
  }

  /** The organization running the fewest with a startable task, and its webhook running the fewest; with every place taken, only an organization running nothing. */
  private pick(full: boolean): { org: OrgLine; orgId: number; hook: Waiting; hookId: number } | null {
    let best: { org: OrgLine; orgId: number; hook: Waiting; hookId: number } | null = null;
    for (const [orgId, org] of this.orgs) {
      if (org.waiting === 0 || (full && org.running > 0)) continue;
      if (best && !before(org, best.org)) continue;
      let pickedHook: [number, Waiting] | null = null;
      for (const [hookId, hook] of org.hooks) {
        if (hook.tasks.length === 0) continue;
        if (hook.tasks[0].cap !== null && hook.running >= hook.tasks[0].cap) continue;
        if (!pickedHook || before(hook, pickedHook[1])) pickedHook = [hookId, hook];
      }
      if (pickedHook) best = { org, orgId, hook: pickedHook[1], hookId: pickedHook[0] };
    }
    return best;
  }

  private start(org: OrgLine, orgId: number, hook: Waiting, hookId: number): void {
    const task = hook.tasks.shift()!;
    org.waiting--;
    this.waitingCount--;
    org.running++;
    hook.running++;
    this.runningCount++;
    org.served = hook.served = ++this.starts;
    // A task that rejects still frees its place; its error goes to 'failed' (the dispatcher's tasks catch their own).
    const done = () => this.finish(org, orgId, hook, hookId);
    task.run().then(done, (err: unknown) => {
      done();
      this.emit('failed', err);
    });
  }

  private finish(org: OrgLine, orgId: number, hook: Waiting, hookId: number): void {
    org.running--;
    hook.running--;
    this.runningCount--;
    if (hook.running === 0 && hook.tasks.length === 0) org.hooks.delete(hookId);
    if (org.running === 0 && org.waiting === 0) this.orgs.delete(orgId);
    this.pump();
    this.emit('next');
    if (this.runningCount === 0 && this.waitingCount === 0) {
      this.emit('idle');
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}

/** Whether `a` goes before `b`: running fewer, or as many and served longer ago. */
function before(a: { running: number; served: number }, b: { running: number; served: number }): boolean {
  return a.running < b.running || (a.running === b.running && a.served < b.served);
}
