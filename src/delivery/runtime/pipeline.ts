import type { Logger } from 'pino';
import type { Claimed } from '../store/claim.ts';
import type { AttemptResult } from '../store/complete.ts';
import type { Release } from '../store/release.ts';
import type { GateVerdict } from '../pacing/gate.ts';

/** The steps a claimed delivery goes through after its claim, each from its own room. */
export interface DeliverySteps {
  /** pacing/gate.ts: send it now, hold it, or put it off. */
  gate: (c: Claimed) => GateVerdict | Promise<GateVerdict>;
  /** attempt/attempt.ts: its body, its sending, its next step. */
  attempt: (c: Claimed) => Promise<AttemptResult>;
  /** The result writer (store/complete.ts in batches): resolves once the result is written. */
  result: (r: AttemptResult) => Promise<void>;
  /** The giving back of what the gate held or put off (store/release.ts in batches). */
  giveBack: (r: Release) => Promise<void>;
  log: Logger;
}

/**
 * One claimed delivery's way through the dispatcher: claim (store/claim.ts, by the claim
 * loop) → gate → attempt → result. Resolves once its result (or its giving back) is
 * written, so the delivery holds its place in the queue until then. An attempt that
 * could not be made is logged and left to its lease: it runs out and the delivery is
 * claimed again.
 */
export function deliveryPipeline(steps: DeliverySteps) {
  return async function deliver(c: Claimed): Promise<void> {
    try {
      const verdict = await steps.gate(c);
      if (!verdict.send) return await steps.giveBack({ deliveryId: c.id, claims: c.claims, until: verdict.until });
      await steps.result(await steps.attempt(c));
    } catch (err) {
      steps.log.error({ err, delivery_id: c.id }, 'delivery attempt failed');
    }
  };
}
