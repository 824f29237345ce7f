import type { PlannedEvent } from '../domain/pushEvents.ts';

/**
 * How a push's planned events are split into chunks, each recorded in one transaction
 * with its deliveries. A push record counts the chunks done in the scheme it was written
 * under (push_records.chunking), so a crash or an upgrade resumes with the same split:
 * 1. chunks of 50 refs (records written before the column existed);
 * 2. the first chunk closes at 50 refs, so a push's first deliveries leave soon; each
 *    later one may hold twice as many as the one before, up to 400 (a 3,000-branch push
 *    is 10 transactions, not 60, each still short).
 * Under either, a chunk also closes once it lists CHUNK_COMMITS commits.
 */
export type Chunking = 1 | 2;

/** The scheme of new push records. */
export const CHUNKING: Chunking = 2;

const CHUNK_REFS_FIRST = 50;
const CHUNK_REFS_MOST = 400;
const CHUNK_COMMITS = 2048;

/** The most refs chunk `k` may hold under `scheme`. */
const refsAt = (scheme: Chunking, k: number) => (scheme === 1 ? CHUNK_REFS_FIRST : Math.min(CHUNK_REFS_MOST, CHUNK_REFS_FIRST * 2 ** k));

/** Splits a plan into its chunks under `scheme`; the same plan always splits the same way. */
export function chunksOf(plans: PlannedEvent[], scheme: Chunking = CHUNKING): PlannedEvent[][] {
  const chunks: PlannedEvent[][] = [];
  let current: PlannedEvent[] = [];
  let commits = 0;
  for (const p of plans) {
    if (current.length > 0 && (current.length >= refsAt(scheme, chunks.length) || commits + p.listed.length > CHUNK_COMMITS)) {
      chunks.push(current);
      current = [];
      commits = 0;
    }
    current.push(p);
    commits += p.listed.length;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
