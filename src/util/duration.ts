const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "250ms", "30s", "5m", "6h", "30d" (or a bare number of seconds) into milliseconds; undefined if unreadable. */
export function parseDuration(value: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 's']);
}
