import { Counter } from 'prom-client';
import { familyOf } from '../metrics/registry.ts';

/** This process's push recording counters, on its /metrics registry. */
export interface PushMetrics {
  /** Push records fully recorded by this process. */
  recorded: Counter;
  /** Chunks of events committed by this process. */
  chunks: Counter;
  /** Attempts at a push record that failed (each is retried later). */
  failures: Counter;
}

/** The push metrics of one running Wharf (keyed by its services object, so servers in one process stay apart). */
export function pushMetrics(owner: object): PushMetrics {
  return familyOf(owner, 'push', (registry) => {
    const registers = [registry];
    return {
      recorded: new Counter({ name: 'wharf_pushes_recorded_total', help: 'Pushes whose events this process recorded.', registers }),
      chunks: new Counter({ name: 'wharf_push_chunks_total', help: 'Chunks of push events this process committed.', registers }),
      failures: new Counter({
        name: 'wharf_push_record_failures_total',
        help: 'Failed attempts at recording a push, by this process (each is retried).',
        registers,
      }),
    };
  });
}
