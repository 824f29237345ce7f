import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/connect.ts';
import { isPostgres } from '../../db/connect.ts';
import type { Claimed } from '../store/claim.ts';
import type { LocalHealth } from './healthKeeper.ts';

/** What to do with a claimed delivery before its attempt: send it, hold it (its webhook is paused or disabled), or put it off to `until`. */
export type GateVerdict = { send: true } | { send: false; until: number | null };

/** A paced attempt waits at most this long for its slot before being put off (and its place freed). */
const PACE_WINDOW_MS = 1000;
/** Reservations an attempt makes, each after waking too late for the last, before it is put off. */
const MAX_RESERVATIONS = 4;
/** How late an attempt may wake for its slot and still take it, at the least (ms). */
const MIN_LATE_MS = 10;

/**
 * Reserves the next slot of a webhook paced at `maxRate` deliveries per second, shared by
 * every process through the webhook's `pace_at`: one statement moves it one interval on
 * when the next slot starts within PACE_WINDOW_MS. Returns the slot's time, or, when every
 * slot of the window is taken, null and when to look again.
 */
async function reserveSlot(db: Db, hookId: number, maxRate: number, now: number): Promise<{ slot: number } | { retryAt: number }> {
  const step = Math.ceil(1000 / maxRate);
  const greatest = isPostgres(db) ? 'GREATEST' : 'MAX';
  const rows: { pace_at: unknown }[] = await db('webhooks')
    .where('id', hookId)
    .where(db.raw('COALESCE(pace_at, 0) <= ?', [now + PACE_WINDOW_MS]))
    .update({ pace_at: db.raw(`${greatest}(COALESCE(pace_at, 0), ?) + ?`, [now, step]) }, ['pace_at']);
  if (rows.length > 0) return { slot: Number(rows[0].pace_at) - step };
  const row = await db('webhooks').where('id', hookId).first('pace_at');
  return { retryAt: row?.pace_at == null ? now : Number(row.pace_at) - PACE_WINDOW_MS };
}

/**
 * The gate every claimed delivery passes before its attempt (SPEC §5.2 max_rate, §5.5):
 * - a paused or disabled webhook's deliveries are held, but its one probe (and pings,
 *   which are sent whatever the webhook's state, as their endpoint promises);
 * - a Retry-After puts every delivery of the webhook off to its time;
 * - a paced webhook's attempt waits for its slot (at most a second), or is put off; one
 *   that wakes too late for its slot reserves another.
 * Held and put-off deliveries spend no attempt. The claim's reading of the webhook is
 * completed by what this process learnt since (a pause it made, a Retry-After it got).
 */
export function createGate(db: Db, local: LocalHealth) {
  // An attempt that wakes more than a quarter of a slot after it (a busy process, a slow
  // reservation) gives the slot up and reserves again from now: a late start would
  // otherwise bring it within less than a slot of the next one, on any node. At least
  // MIN_LATE_MS: a timer's own wake-up and a Postgres round trip take a few ms, and at high
  // rates a tighter bound would throw most slots away.
  async function paced(hookId: number, maxRate: number): Promise<GateVerdict> {
    const lateMs = Math.max(MIN_LATE_MS, Math.floor(1000 / maxRate / 4));
    for (let tries = 0; tries < MAX_RESERVATIONS; tries++) {
      const now = Date.now();
      const reserved = await reserveSlot(db, hookId, maxRate, now);
      if ('retryAt' in reserved) return { send: false, until: Math.max(reserved.retryAt, now + 1) };
      const wait = reserved.slot - Date.now();
      if (wait > 0) await sleep(wait);
      if (Date.now() - reserved.slot <= lateMs) return { send: true };
    }
    return { send: false, until: Date.now() + 1 };
  }

  return async function gate(c: Claimed): Promise<GateVerdict> {
    const h = c.health;
    const turned = local.unhealthySince(c.hookId);
    const unhealthy = (h !== null && h.state !== 'healthy') || (turned !== undefined && turned >= c.claimedAt);
    if (unhealthy && c.event !== 'ping' && h?.probe !== c.id) return { send: false, until: null };
    const now = Date.now();
    const notBefore = Math.max(h?.notBefore ?? 0, local.notBefore(c.hookId) ?? 0);
    if (notBefore > now) return { send: false, until: notBefore };
    if (h?.maxRate) return paced(c.hookId, h.maxRate);
    return { send: true };
  };
}
