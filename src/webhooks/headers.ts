import type { Config } from '../config.ts';
import type { ErrorDetail } from '../errors/wharfError.ts';
import { sealSecret } from '../secrets/box.ts';
import { openWithKnownKey } from '../secrets/keyring.ts';
import { worded } from '../util/schema.ts';

// A webhook's custom headers (SPEC §5.2): sent on every attempt after Wharf's own, which
// they never replace. Their values are secrets (an `Authorization` header, typically):
// stored sealed like the webhook secret, never returned, logged or recorded in a
// delivery's request headers (MASK stands in for them everywhere).

const PURPOSE = 'webhooks.headers';

/** At most this many custom headers per webhook. */
export const MAX_CUSTOM_HEADERS = 10;
/** The longest header name and value. */
export const MAX_HEADER_NAME = 64;
export const MAX_HEADER_VALUE = 1024;

/** What stands for a custom header's value wherever it would be shown. */
export const MASK = '********';

/** An HTTP token (RFC 9110 §5.6.2), a field name. */
export const HEADER_NAME_PATTERN = worded("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", "must be an HTTP header name: letters, digits and !#$%&'*+.^_`|~-");
/**
 * A value: visible ASCII, with spaces and tabs inside (RFC 9110 field content without
 * obs-text); never empty, never starting or ending with white space (which HTTP strips),
 * so never CR, LF or NUL.
 */
export const HEADER_VALUE_PATTERN = worded(
  '^[!-~](?:[ \\t!-~]*[!-~])?$',
  'must be visible ASCII characters, with spaces and tabs inside but not at either end',
);

/** The `headers` field of a webhook's create and update bodies. */
export const HEADERS_FIELD = {
  type: 'object',
  maxProperties: MAX_CUSTOM_HEADERS,
  propertyNames: { type: 'string', minLength: 1, maxLength: MAX_HEADER_NAME, pattern: HEADER_NAME_PATTERN },
  additionalProperties: { type: 'string', minLength: 1, maxLength: MAX_HEADER_VALUE, pattern: HEADER_VALUE_PATTERN },
  description:
    'Custom headers sent on every attempt after Wharf\'s own: at most 10, each name an HTTP token of at most 64 characters, each value 1–1,024 visible ASCII characters (spaces and tabs inside). Names Wharf sends or HTTP reserves are refused. Values are write-only: records show `"********"`. On PATCH the object replaces the whole set; `{}` removes them all.',
} as const;

/** Header names (lowercase) a webhook may not set: Wharf's own and HTTP's connection headers (undici refuses those). */
const RESERVED = new Set([
  'content-type',
  'user-agent',
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);
const RESERVED_PREFIXES = ['x-service-', 'x-github-', 'x-hub-', 'webhook-'];

/** Whether a webhook may not set this header. */
export function reservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.has(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p));
}

/** What the schema cannot say of a schema-valid `headers` object: reserved names, and one name twice in different case. */
export function customHeaderProblems(headers: Record<string, string>): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const name of Object.keys(headers)) {
    const path = `/headers/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (reservedHeader(name)) problems.push({ path, message: 'is a header Wharf sets or HTTP reserves; it cannot be set' });
    const lower = name.toLowerCase();
    if (seen.has(lower)) problems.push({ path, message: 'is named twice (header names ignore case)' });
    seen.add(lower);
  }
  return problems;
}

/** The stored forms of a set of custom headers: the names in the clear (JSON), the set sealed, or null when empty. */
export function sealCustomHeaders(config: Pick<Config, 'secretKey'>, headers: Record<string, string>): { header_names: string; headers: string | null } {
  const names = Object.keys(headers);
  return { header_names: JSON.stringify(names), headers: names.length === 0 ? null : sealSecret(config, PURPOSE, JSON.stringify(headers)) };
}

/**
 * The custom headers of a stored (sealed) set, opened once per stored value as the
 * signer does the secret: every attempt of a webhook reuses them. A changed or re-sealed
 * set is a new stored value, a new entry.
 */
const opened = new Map<string, { send: Record<string, string>; recorded: Record<string, string> }>();

export function openCustomHeaders(stored: string): { send: Record<string, string>; recorded: Record<string, string> } {
  let h = opened.get(stored);
  if (h === undefined) {
    if (opened.size > 10_000) opened.clear();
    const send = JSON.parse(openWithKnownKey(PURPOSE, stored)) as Record<string, string>;
    const recorded = Object.fromEntries(Object.keys(send).map((name) => [name, MASK]));
    opened.set(stored, (h = { send, recorded }));
  }
  return h;
}

/** A record's `headers`: each name with MASK for its value. */
export function maskedHeaders(names: string[]): Record<string, typeof MASK> {
  return Object.fromEntries(names.map((name) => [name, MASK]));
}
