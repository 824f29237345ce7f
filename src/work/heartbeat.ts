/**
 * Renews a lease every `everyMs` while work runs; returns the function that stops it.
 * `renew` resolves false when the lease is no longer held (taken over, canceled): `lost`
 * is then called once and the heartbeat stops. A renewal that fails (the database is
 * briefly away) is only skipped: the next one may pass, and the lease is long enough
 * to outlast a few misses.
 */
export function heartbeat(renew: () => Promise<boolean>, everyMs: number, lost: () => void): () => void {
  let stopped = false;
  const timer = setInterval(() => {
    renew().then(
      (held) => {
        if (held || stopped) return;
        stopped = true;
        clearInterval(timer);
        lost();
      },
      () => {},
    );
  }, everyMs);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
