import { DEFAULT_HOLD_MS, type Shares } from '../store/shares.ts';

/** How fast what a webhook or organization was served fades: halved every minute. */
const HALF_LIFE_MS = 60_000;
/** How much of the expected hold a new measure moves (an exponentially weighted mean). */
const LEARN = 0.2;
/** Below this (ms) a faded charge is forgotten. */
const FORGOTTEN_MS = 1;

interface Charge {
  /** Place-milliseconds served, as of `at`. */
  ms: number;
  at: number;
}

interface HookCharge extends Charge {
  org: number;
  /** The expected time an attempt of this webhook holds its place. */
  holdMs: number;
}

/**
 * The time each webhook and each organization held a place here (place-milliseconds,
 * fading by half every minute), and how long a webhook's attempt is expected to hold one.
 * The dispatcher shares its places by it: a webhook or organization that was served less
 * goes first, so a receiver answering in 20 ms gets many turns for another's one 3 s
 * attempt (start-time fair queuing charged by the time a place is held), while a
 * webhook alone still takes every place. Kept per process: across nodes, the leases in
 * the shared table still count what every node holds (claim.ts).
 */
export class ServiceLedger {
  private readonly hooks = new Map<number, HookCharge>();
  private readonly orgs = new Map<number, Charge>();

  /** The ledger's clock (ms), which the queue charging it reads too. */
  constructor(readonly now: () => number = Date.now) {}

  /** An attempt of `hook` (of `org`) held its place for `ms`. */
  charge(org: number, hook: number, ms: number): void {
    const t = this.now();
    const h = this.hooks.get(hook);
    if (h) {
      h.ms = faded(h, t) + ms;
      h.at = t;
      h.org = org;
      h.holdMs += LEARN * (ms - h.holdMs);
    } else this.hooks.set(hook, { ms, at: t, org, holdMs: ms });
    const o = this.orgs.get(org);
    if (o) {
      o.ms = faded(o, t) + ms;
      o.at = t;
    } else this.orgs.set(org, { ms, at: t });
  }

  /** The webhook's time served, faded to now. */
  hookServed(hook: number, t = this.now()): number {
    const h = this.hooks.get(hook);
    return h ? faded(h, t) : 0;
  }

  /** The organization's time served, faded to now. */
  orgServed(org: number, t = this.now()): number {
    const o = this.orgs.get(org);
    return o ? faded(o, t) : 0;
  }

  /** The expected time an attempt of the webhook holds its place. */
  holdMs(hook: number): number {
    return this.hooks.get(hook)?.holdMs ?? DEFAULT_HOLD_MS;
  }

  /** What a claim ranks by, each figure rounded to the millisecond; what has faded away is forgotten. */
  shares(): Shares {
    const t = this.now();
    const hooks: Shares['hooks'] = [];
    for (const [hook, h] of this.hooks) {
      const ms = faded(h, t);
      if (ms < FORGOTTEN_MS) this.hooks.delete(hook);
      else hooks.push({ hook, servedMs: Math.round(ms), holdMs: Math.max(1, Math.round(h.holdMs)) });
    }
    const orgs: Shares['orgs'] = [];
    for (const [org, o] of this.orgs) {
      const ms = faded(o, t);
      if (ms < FORGOTTEN_MS) this.orgs.delete(org);
      else orgs.push({ org, servedMs: Math.round(ms) });
    }
    return { hooks, orgs };
  }
}

function faded(c: Charge, t: number): number {
  return t <= c.at ? c.ms : c.ms * 2 ** (-(t - c.at) / HALF_LIFE_MS);
}
