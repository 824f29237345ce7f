import { inspect } from 'node:util';
import type { Knex } from 'knex';

/** How long `waitFor` polls, how often, and what it names in its error. */
export interface WaitOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Time between two checks (default 25 ms). */
  intervalMs?: number;
  /** What is awaited, for the error on timeout. */
  what?: string;
}

/** What a truthy value of T can be. */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Polls `check` until it returns a truthy value and returns that value. On timeout it
 * throws an error naming what was awaited and the last value `check` returned, so a
 * failing test says how far the state got. An error thrown by `check` ends the wait.
 */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitOptions = {}): Promise<Truthy<T>> {
  const { timeoutMs = 30_000, intervalMs = 25, what = 'a condition' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${inspect(value, { depth: 4, breakLength: Infinity })}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until the clock reads past `epochMs` (a timestamp written later then compares greater). */
export async function clockPast(epochMs: number): Promise<void> {
  await waitFor(() => Date.now() > epochMs, { intervalMs: 1, timeoutMs: 5_000, what: `the clock to pass ${epochMs}` });
}

/** Waits `ms` while nothing is expected to change; only for checks that something does NOT happen where no state can be awaited (say why at the call). */
export function quietPeriod(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Which deliveries a settled-state wait looks at. */
export interface DeliveryFilter {
  webhookId?: number;
  event?: string;
  /** Also wait until at least this many deliveries match. */
  count?: number;
}

/** One delivery row as the settled-state waits return it. */
export interface SettledDelivery {
  id: number;
  guid: string;
  webhook_id: number;
  event: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  lease_owner: string | null;
  error: string | null;
}

/**
 * Waits until every matching delivery is settled: none is pending (each is recorded a
 * success or a final failure, parked included), none holds a lease, and none has a
 * next attempt scheduled; with `count`, until at least that many match, too. Returns
 * the matching rows in id order. A settled delivery is never sent again by itself, so
 * after this a receiver's count is final.
 */
export async function deliveriesSettled(db: Knex, filter: DeliveryFilter = {}, options: WaitOptions = {}): Promise<SettledDelivery[]> {
  const read = async () => {
    const q = db('deliveries').orderBy('id').select('id', 'guid', 'webhook_id', 'event', 'status', 'attempts', 'next_attempt_at', 'lease_owner', 'error');
    if (filter.webhookId !== undefined) q.where('webhook_id', filter.webhookId);
    if (filter.event !== undefined) q.where('event', filter.event);
    return (await q).map((r: any) => ({
      ...r,
      id: Number(r.id),
      webhook_id: Number(r.webhook_id),
      attempts: Number(r.attempts),
      next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
    })) as SettledDelivery[];
  };
  let last: SettledDelivery[] = [];
  const settled = (r: SettledDelivery) => r.status !== 'pending' && r.lease_owner === null && r.next_attempt_at === null;
  await waitFor(
    async () => {
      last = await read();
      return last.length >= (filter.count ?? 0) && last.every(settled);
    },
    { what: `deliveries settled (${JSON.stringify(filter)})`, ...options },
  ).catch((err) => {
    throw new Error(
      `${err.message.split(';')[0]}: ${last.length} matching, unsettled ${inspect(last.filter((r) => !settled(r)).slice(0, 5), { breakLength: Infinity })}`,
    );
  });
  return last;
}

/**
 * Waits until no worker holds a lease: no delivery has a lease owner, no push record is
 * locked, no unfinished import job is locked. Work left after this is waiting, not running.
 */
export async function leasesReleased(db: Knex, options: WaitOptions = {}): Promise<void> {
  let lastHeld: unknown;
  const held = async () => {
    const count = async (q: Knex.QueryBuilder) => Number(((await q.count({ n: '*' })) as any[])[0].n);
    return {
      deliveries: await count(db('deliveries').whereNotNull('lease_owner')),
      pushRecords: await count(db('push_records').whereNotNull('locked_by')),
      importJobs: await count(db('import_jobs').whereNull('finished_at').whereNotNull('locked_by')),
    };
  };
  await waitFor(
    async () => {
      const h = await held();
      lastHeld = h;
      return h.deliveries + h.pushRecords + h.importJobs === 0;
    },
    { what: 'every lease released', ...options },
  ).catch((err) => {
    throw new Error(`${err.message.split(';')[0]}: still held ${JSON.stringify(lastHeld)}`);
  });
}

/**
 * Waits until every push that has returned to its client is recorded as events (or
 * parked): no push record is left waiting. Pushes are recorded just after they return.
 */
export async function pushesRecorded(db: Knex, options: WaitOptions = {}): Promise<void> {
  let left = 0;
  await waitFor(
    async () => {
      left = Number(((await db('push_records').whereNull('parked_at').count({ n: '*' })) as any[])[0].n);
      return left === 0;
    },
    { timeoutMs: 10_000, intervalMs: 10, what: 'every push recorded', ...options },
  ).catch((err) => {
    throw new Error(`${err.message.split(';')[0]}: ${left} push records still waiting`);
  });
}
