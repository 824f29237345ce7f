/**
 * A gate between attempts in one process: ordinary attempts share it, an attempt of a
 * delivery one death short of parking (its node died while it was in flight, twice)
 * takes it alone. A delivery whose attempt kills its node is so alone at its last death,
 * and the deliveries that happened to be in flight beside it at its first ones are not
 * counted a last time with it: only the culprit reaches the parking threshold. Only such
 * deliveries wait for the gate, so ordinary crashes cost no throughput. Waiting exclusive attempts go before later shared ones, so a
 * steady flow of ordinary attempts cannot starve them.
 */
export function createIsolationGate() {
  let shared = 0;
  let exclusive = false;
  const waiting: { alone: boolean; resolve: () => void }[] = [];

  const pump = () => {
    while (waiting.length > 0 && !exclusive) {
      const next = waiting[0];
      if (next.alone) {
        if (shared > 0) return;
        exclusive = true;
      } else {
        shared += 1;
      }
      waiting.shift();
      next.resolve();
    }
  };

  /** Runs `work` alone (no other attempt in flight) when `alone`, else beside other shared work. */
  return async function run<T>(alone: boolean, work: () => Promise<T>): Promise<T> {
    if (waiting.length === 0 && !exclusive && (alone ? shared === 0 : true)) {
      if (alone) exclusive = true;
      else shared += 1;
    } else {
      await new Promise<void>((resolve) => {
        waiting.push({ alone, resolve });
        pump();
      });
    }
    try {
      return await work();
    } finally {
      if (alone) exclusive = false;
      else shared -= 1;
      pump();
    }
  };
}
