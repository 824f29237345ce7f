import { EventEmitter } from 'node:events';
import { ServiceLedger } from './serviceLedger.ts';

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
  /** The expected hold of its running tasks, summed (what they will be charged, as far as known). */
  holding: number;
  /** When it last started a task (a sequence number; 0: never): among equals, the one served longest ago goes first. */
  served: number;
  tasks: FairTask[];
}

interface OrgLine {
  running: number;
  holding: number;
  served: number;
  /** Its webhooks, each with what waits and what runs. */
  hooks: Map<number, Waiting>;
  waiting: number;
}

/**
 * The dispatcher's local queue: runs at most `concurrency` tasks at once, and starts the
 * next from the organization that was served the least, then its webhook served the
 * least (first come, first served within a webhook), never past a webhook's cap. Served
 * is time: the place-time charged to it in the ledger (serviceLedger.ts) plus the
 * expected hold of what it runs now, so a webhook whose receiver answers in 20 ms gets
 * about 150 turns for another's one 3 s attempt; among equals, the one served longest
 * ago goes first. An
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
    /** Where the time each task held its place is charged, and read back to choose (its clock times the tasks). */
    readonly ledger: ServiceLedger = new ServiceLedger(),
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
    if (!org) this.orgs.set(task.org, (org = { running: 0, holding: 0, served: 0, hooks: new Map(), waiting: 0 }));
    let hook = org.hooks.get(task.hook);
    if (!hook) org.hooks.set(task.hook, (hook = { running: 0, holding: 0, served: 0, tasks: [] }));
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

  /** The organization served the least with a startable task, and its webhook served the least; with every place taken, only an organization running nothing. */
  private pick(full: boolean): { org: OrgLine; orgId: number; hook: Waiting; hookId: number } | null {
    const t = this.ledger.now();
    let best: { org: OrgLine; orgId: number; hook: Waiting; hookId: number; key: Key } | null = null;
    for (const [orgId, org] of this.orgs) {
      if (org.waiting === 0 || (full && org.running > 0)) continue;
      const key = { time: this.ledger.orgServed(orgId, t) + org.holding, served: org.served };
      if (best && !before(key, best.key)) continue;
      let pickedHook: [number, Waiting, Key] | null = null;
      for (const [hookId, hook] of org.hooks) {
        if (hook.tasks.length === 0) continue;
        if (hook.tasks[0].cap !== null && hook.running >= hook.tasks[0].cap) continue;
        const hookKey = { time: this.ledger.hookServed(hookId, t) + hook.holding, served: hook.served };
        if (!pickedHook || before(hookKey, pickedHook[2])) pickedHook = [hookId, hook, hookKey];
      }
      if (pickedHook) best = { org, orgId, hook: pickedHook[1], hookId: pickedHook[0], key };
    }
    return best;
  }

  private start(org: OrgLine, orgId: number, hook: Waiting, hookId: number): void {
    const task = hook.tasks.shift()!;
    const expected = this.ledger.holdMs(hookId);
    const startedAt = this.ledger.now();
    org.waiting--;
    this.waitingCount--;
    org.running++;
    hook.running++;
    org.holding += expected;
    hook.holding += expected;
    this.runningCount++;
    org.served = hook.served = ++this.starts;
    // A task that rejects still frees its place; its error goes to 'failed' (the dispatcher's tasks catch their own).
    const done = () => {
      org.holding -= expected;
      hook.holding -= expected;
      this.ledger.charge(orgId, hookId, Math.max(0, this.ledger.now() - startedAt));
      this.finish(org, orgId, hook, hookId);
    };
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

/** What a choice compares: time served (charged and expected), and when it last started a task. */
interface Key {
  time: number;
  served: number;
}

/** Whether `a` goes before `b`: served less time, or as much and served longer ago. */
function before(a: Key, b: Key): boolean {
  return a.time < b.time || (a.time === b.time && a.served < b.served);
}
