import { Counter, Gauge, Histogram } from 'prom-client';
import { familyOf } from '../../metrics/registry.ts';

/** Upper bounds (seconds) of the attempt latency histogram. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const OUTCOMES = ['success', 'failure', 'error'] as const;

/** This process's delivery counters, on its /metrics registry. */
export class DeliveryMetrics {
  readonly #inFlight: Gauge;
  readonly #attempts: Counter<'outcome'>;
  readonly #latency: Histogram;
  #current = 0;
  #total = 0;

  constructor(registry: import('prom-client').Registry) {
    const registers = [registry];
    this.#inFlight = new Gauge({ name: 'wharf_delivery_in_flight', help: 'Attempts in flight in this process.', registers });
    this.#attempts = new Counter({
      name: 'wharf_delivery_attempts_total',
      help: 'Delivery attempts made by this process, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of OUTCOMES) this.#attempts.inc({ outcome }, 0);
    this.#latency = new Histogram({ name: 'wharf_delivery_attempt_seconds', help: 'Delivery attempt latency.', buckets: LATENCY_BUCKETS, registers });
  }

  /** Attempts in flight in this process now. */
  get inFlight(): number {
    return this.#current;
  }

  set inFlight(n: number) {
    this.#current = n;
    this.#inFlight.set(n);
  }

  /** Attempts this process made, every outcome. */
  get attemptsTotal(): number {
    return this.#total;
  }

  /** Counts one finished attempt and its latency. */
  observe(outcome: (typeof OUTCOMES)[number], seconds: number): void {
    this.#total += 1;
    this.#attempts.inc({ outcome });
    this.#latency.observe(seconds);
  }
}

/** The delivery metrics of one running Wharf (keyed by its services object, so servers in one process stay apart). */
export function deliveryMetrics(owner: object): DeliveryMetrics {
  return familyOf(owner, 'delivery', (registry) => new DeliveryMetrics(registry));
}
