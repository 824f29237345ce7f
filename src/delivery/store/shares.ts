/**
 * What the fair claim (claim.ts) is told of the time served here, by the dispatcher's
 * ledger (pacing/serviceLedger.ts): each webhook's time served and expected hold, each
 * organization's time served.
 */
export interface Shares {
  hooks: { hook: number; servedMs: number; holdMs: number }[];
  orgs: { org: number; servedMs: number }[];
}

/** What an attempt of a webhook never timed here is expected to hold its place for (the ledger's start, the claim's default). */
export const DEFAULT_HOLD_MS = 50;
