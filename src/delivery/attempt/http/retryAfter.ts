/** Longest delay a receiver's Retry-After may add (it may only push the next attempt later; SPEC §5.5). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Reads a Retry-After header (seconds or an HTTP date) as milliseconds from `now`; null if absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** A 429's or 503's Retry-After as the time it names, or null (any other answer, or none). */
export function retryAfterAt(statusCode: number | null, value: string | undefined, endedAt: number): number | null {
  if (statusCode !== 429 && statusCode !== 503) return null;
  const ms = retryAfterMs(value, endedAt);
  return ms === null ? null : endedAt + ms;
}
