/** This process's push recording counters, read by GET /metrics. */
export interface PushMetrics {
  /** Push records fully recorded by this process. */
  recorded: number;
  /** Chunks of events committed by this process. */
  chunks: number;
  /** Attempts at a push record that failed (each is retried later). */
  failures: number;
}

const byOwner = new WeakMap<object, PushMetrics>();

/** The push metrics of one running Wharf (keyed by its services object, so servers in one process stay apart). */
export function pushMetrics(owner: object): PushMetrics {
  let m = byOwner.get(owner);
  if (!m) byOwner.set(owner, (m = { recorded: 0, chunks: 0, failures: 0 }));
  return m;
}
