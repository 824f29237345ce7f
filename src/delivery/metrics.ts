/** Upper bounds (seconds) of the attempt latency histogram. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** This process's delivery counters, read by GET /metrics. */
export class DeliveryMetrics {
  /** Attempts by outcome: success, failure (a status) or error (no status). */
  readonly attempts = new Map<string, number>();
  readonly latencyBuckets = LATENCY_BUCKETS.map(() => 0);
  latencyCount = 0;
  latencySum = 0;
  inFlight = 0;

  /** Counts one finished attempt and its latency. */
  observe(outcome: 'success' | 'failure' | 'error', seconds: number): void {
    this.attempts.set(outcome, (this.attempts.get(outcome) ?? 0) + 1);
    this.latencyCount += 1;
    this.latencySum += seconds;
    LATENCY_BUCKETS.forEach((le, i) => {
      if (seconds <= le) this.latencyBuckets[i] += 1;
    });
  }
}

const byOwner = new WeakMap<object, DeliveryMetrics>();

/** The delivery metrics of one running Wharf (keyed by its services object, so servers in one process stay apart). */
export function deliveryMetrics(owner: object): DeliveryMetrics {
  let m = byOwner.get(owner);
  if (!m) byOwner.set(owner, (m = new DeliveryMetrics()));
  return m;
}
