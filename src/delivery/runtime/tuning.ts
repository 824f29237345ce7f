import type { Config } from '../../config.ts';

/** How the dispatcher is tuned for one database: every dialect difference lives here. */
export interface DispatchTuning {
  /** Claimed deliveries that may wait behind the attempts in flight, in multiples of WEBHOOK_CONCURRENCY. */
  ahead: number;
  /** How long a claim holds a delivery before it falls due again. */
  leaseMs: number;
  /** Result writes that may run at once. */
  writers: number;
  /** Most results one write takes. */
  writeBatchMax: number;
  /** While attempts are in flight, claim only once this many places are free (fewer, larger claims). */
  claimBatchMin: number;
}

/**
 * The tuning of a dialect. Claims run ahead of the free slots so the next attempt never
 * waits for a claim's round trip: Postgres looks two batches ahead, as its claims are a
 * round trip to a server that shares the machine and can take several milliseconds under
 * load; SQLite's claims are a quick local call, and one batch is enough. A claimed
 * delivery so waits for at most `ahead` attempts before it (each at most WEBHOOK_TIMEOUT),
 * then makes its own; the lease covers all of them and the result write right after.
 * Postgres takes a few writers at once (their commits overlap); SQLite serializes writers
 * anyway, so it gets one. A write takes what gathered while the one before it ran, so the
 * batches stay small and a result waits at most for one write before its own.
 */
export function dispatchTuning(dialect: 'sqlite' | 'postgres', config: Pick<Config, 'webhookConcurrency' | 'webhookTimeoutMs'>): DispatchTuning {
  const ahead = dialect === 'postgres' ? 2 : 1;
  return {
    ahead,
    leaseMs: (1 + ahead) * config.webhookTimeoutMs + 5_000,
    writers: dialect === 'postgres' ? 4 : 1,
    writeBatchMax: 500,
    claimBatchMin: Math.max(1, Math.floor(config.webhookConcurrency / 2)),
  };
}
