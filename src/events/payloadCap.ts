/**
 * The most bytes an event payload is stored (and so delivered) with: GitHub's cap on
 * webhook payloads, 25 MB, counted in decimal megabytes so it holds under either reading.
 */
export const MAX_PAYLOAD_BYTES = 25_000_000;

/** What a string cut to fit the cap ends with (the last resort, see serializePayload). */
export const TRUNCATED_MARK = '… [truncated]';

/**
 * The payload's JSON, at most `maxBytes` UTF-8 bytes. A larger push payload loses commits,
 * oldest first, until it fits (`head_commit` and `total_commits` stay as they are, so the
 * count still tells the truth). If it still does not fit (a giant commit message, or
 * another type), the longest strings are cut, each ending with TRUNCATED_MARK. The cap is
 * a parameter so tests can use a small one; production uses MAX_PAYLOAD_BYTES.
 */
export function serializePayload(type: string, payload: Record<string, unknown>, maxBytes = MAX_PAYLOAD_BYTES): string {
  let json = JSON.stringify(payload);
  let size = Buffer.byteLength(json);
  if (size <= maxBytes) return json;
  if (type === 'push' && Array.isArray(payload.commits)) {
    payload = { ...payload, commits: withoutOldest(payload.commits, size - maxBytes) };
    json = JSON.stringify(payload);
    size = Buffer.byteLength(json);
    if (size <= maxBytes) return json;
  }
  return cutLongStrings(payload, size, maxBytes);
}

/** The newest commits left once the oldest whose JSON adds up to `excess` bytes are dropped. */
function withoutOldest(commits: unknown[], excess: number): unknown[] {
  let drop = 0;
  // Each listed commit costs its JSON and one comma: measured one by one, never the whole list again.
  while (excess > 0 && drop < commits.length) excess -= Buffer.byteLength(JSON.stringify(commits[drop++])) + 1;
  return commits.slice(drop);
}

/**
 * Cuts every string longer than a limit down to it, the limit chosen so the JSON fits:
 * estimated from each string's own bytes per character (escapes and multi-byte characters
 * included), then measured; a try that still overshoots lowers the limit by a tenth.
 * Should even empty strings not fit, only the scalar fields and the repository and
 * sender objects are kept.
 */
function cutLongStrings(payload: Record<string, unknown>, size: number, maxBytes: number): string {
  const strings = stringSizes(payload);
  let limit = limitFor(strings, size - maxBytes);
  for (;;) {
    const json = JSON.stringify(payload, (_key, value) => (typeof value === 'string' && value.length > limit + MARK_BYTES ? cut(value, limit) : value));
    if (Buffer.byteLength(json) <= maxBytes) return json;
    if (limit === 0) return JSON.stringify(bare(payload));
    limit = Math.floor(limit * 0.9);
  }
}

const MARK_BYTES = Buffer.byteLength(TRUNCATED_MARK);

interface StringSize {
  /** UTF-16 units: what String.slice counts. */
  units: number;
  /** Bytes in the JSON, escapes included. */
  bytes: number;
}

/** The largest limit (in units) whose cuts are estimated to save at least `excess` bytes; 0 when none does. */
function limitFor(strings: StringSize[], excess: number): number {
  const saving = (limit: number) =>
    strings.reduce((sum, s) => (s.units > limit + MARK_BYTES ? sum + s.bytes - (s.bytes / s.units) * limit - MARK_BYTES : sum), 0);
  let low = 0;
  let high = Math.max(0, ...strings.map((s) => s.units));
  if (saving(0) < excess) return 0;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (saving(mid) >= excess) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The payload without lists or nested objects, but for who and where. */
function bare(payload: Record<string, unknown>): Record<string, unknown> {
  const kept = Object.entries(payload).filter(([key, v]) => key === 'repository' || key === 'sender' || v === null || typeof v !== 'object');
  return Object.fromEntries(kept.map(([key, v]) => [key, typeof v === 'string' && v.length > 255 ? '' : v]));
}

/** The size of every string in a JSON value (keys aside). */
function stringSizes(value: unknown, out: StringSize[] = []): StringSize[] {
  if (typeof value === 'string') out.push({ units: value.length, bytes: Buffer.byteLength(JSON.stringify(value)) - 2 });
  else if (Array.isArray(value)) for (const v of value) stringSizes(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringSizes(v, out);
  return out;
}

/** A string cut to `limit` UTF-16 units (never inside a surrogate pair), marked as cut. */
function cut(value: string, limit: number): string {
  let end = limit;
  const code = value.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  return value.slice(0, end) + TRUNCATED_MARK;
}
