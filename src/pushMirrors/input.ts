import type { FromSchema } from 'json-schema-to-ts';

/** A push mirror request (SPEC §8.1.2) as the REST API takes it. */
export const NEW_PUSH_MIRROR = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    username: { type: 'string', maxLength: 255 },
    password: { type: 'string', maxLength: 4096 },
    sync_on_push: { type: 'boolean', default: true },
    interval: { type: 'string', minLength: 1, maxLength: 32, default: '8h', description: 'A duration such as 10m, 8h or 1d; at least 1m.' },
  },
} as const;

export type NewPushMirror = FromSchema<typeof NEW_PUSH_MIRROR>;

/** A push mirror request as createPushMirror takes it: the defaulted fields may be left out (callers without the schema). */
export type PushMirrorRequest = Omit<NewPushMirror, 'sync_on_push' | 'interval'> & { sync_on_push?: boolean; interval?: string };

/** Push mirrors one repository may have (Gitea's default cap). */
export const MAX_PUSH_MIRRORS = 10;

/** The longest interval accepted. */
export const MAX_INTERVAL_MS = 366 * 86_400_000;

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** An interval in the shortest form parseDuration reads back ("8h", "90m", "1500ms"). */
export function formatInterval(ms: number): string {
  for (const [unit, size] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
