import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.ts';
import type { ErrorDetail } from '../errors/wharfError.ts';
import { compileDetails } from '../util/schema.ts';
import { parseDuration } from '../util/duration.ts';
import { HEADER_STYLES, ORG_ONLY_EVENTS, WEBHOOK_EVENTS } from './model.ts';
import { checkTarget, MAX_URL_LENGTH } from './target.ts';
import { validBranchFilter } from './match.ts';
import { customHeaderProblems, HEADERS_FIELD } from './headers.ts';

/** A webhook's fields as a caller sends them (SPEC §5.2); the web UI's form reads its bounds here too. */
export const WEBHOOK_FIELDS = {
  url: { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH },
  // `application/json` is the label forms show for `json` (GitHub's own form posts either).
  content_type: { type: 'string', enum: ['json', 'application/json'] },
  secret: { type: 'string', minLength: 1, maxLength: 1024 },
  events: { type: 'array', minItems: 1, maxItems: WEBHOOK_EVENTS.length, items: { type: 'string', enum: WEBHOOK_EVENTS } },
  active: { type: 'boolean' },
  branch_filter: { type: ['string', 'null'], maxLength: 255 },
  header_style: {
    type: 'string',
    enum: HEADER_STYLES,
    description: '`github`: every delivery also carries `X-GitHub-Event`, `X-GitHub-Delivery`, `X-GitHub-Hook-ID` and `X-Hub-Signature-256`.',
  },
  headers: HEADERS_FIELD,
  max_rate: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 1000,
    description: 'Deliveries per second at most; attempts over it wait, without failing and without spending an attempt. `null`: not paced.',
  },
  max_concurrency: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 64,
    description:
      'Attempts in flight at most, across all nodes; deliveries over it wait their turn, without failing and without spending an attempt. `null`: no cap beyond the fair share.',
  },
} as const;

/** A webhook to create: its URL at least. */
export const WEBHOOK_CREATE = { type: 'object', additionalProperties: false, required: ['url'], properties: WEBHOOK_FIELDS } as const;

/** A change to a webhook: any of its fields. */
export const WEBHOOK_UPDATE = { type: 'object', additionalProperties: false, properties: WEBHOOK_FIELDS } as const;

/** A webhook's fields as sent, all optional. */
export type WebhookFields = FromSchema<typeof WEBHOOK_UPDATE>;

/** Fields a caller sets on a webhook, checked and normalized (the content type is `json` whichever way it was named); all optional on update. */
export type WebhookInput = Omit<WebhookFields, 'content_type'> & { content_type?: 'json' };

const schemaProblems = compileDetails(WEBHOOK_UPDATE);

/**
 * Checks a webhook's fields, as the REST API sends them or the web UI's form gives them:
 * the schema, then what it cannot express (the URL's target and the host policy, the
 * branch glob), and normalizes them (URL, content type, events, an empty branch filter
 * as none). Every problem is named (a JSON Pointer and a message), or the input is
 * returned ready for the store.
 */
export async function checkWebhookInput(config: Config, fields: unknown): Promise<{ input: WebhookInput; problems?: undefined } | { problems: ErrorDetail[] }> {
  const problems = schemaProblems(fields);
  if (problems.some((p) => p.path === '/')) return { problems };
  const failed = (field: string) => problems.some((p) => p.path === `/${field}` || p.path.startsWith(`/${field}/`));
  const input = fields as WebhookFields;
  let url = input.url;
  if (url !== undefined && !failed('url')) {
    const target = await checkTarget(config.webhookAllowedHosts, url);
    if (target.problem) problems.push({ path: '/url', message: target.problem });
    url = target.url;
  }
  let branchFilter = input.branch_filter;
  if (branchFilter === '') branchFilter = null;
  if (typeof branchFilter === 'string' && !failed('branch_filter') && !validBranchFilter(branchFilter)) {
    problems.push({ path: '/branch_filter', message: 'is not a valid glob' });
  }
  if (input.headers !== undefined && !failed('headers')) problems.push(...customHeaderProblems(input.headers));
  if (problems.length > 0) return { problems };
  const events: WebhookInput['events'] = input.events && (input.events.includes('*') ? ['*'] : [...new Set(input.events)]);
  const contentType = input.content_type === undefined ? undefined : ('json' as const);
  return { input: { ...input, url, content_type: contentType, branch_filter: branchFilter, events } };
}

/** For a repository webhook: `repository` and `import` are organization webhooks' events only (SPEC §5.4). */
export function orgOnlyEventProblems(events: readonly string[] | undefined): ErrorDetail[] {
  return (events ?? []).flatMap((e, i) =>
    (ORG_ONLY_EVENTS as readonly string[]).includes(e) ? [{ path: `/events/${i}`, message: `${e} events are sent to organization webhooks only` }] : [],
  );
}

/** A bulk redelivery's request (SPEC §5.2): the window of finished deliveries to send again. */
export const REDELIVER_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: { type: 'string', format: 'date-time', description: 'RFC 3339: deliveries that finished (their last attempt) at or after this time.' },
    until: { type: 'string', format: 'date-time', description: 'RFC 3339: … and at or before this time (default: now).' },
    status: { type: 'string', enum: ['failed'], description: 'Which deliveries: `failed` (the only one, and the default).' },
  },
} as const;

/** A bulk redelivery's request as sent. */
export type RedeliverInput = FromSchema<typeof REDELIVER_INPUT>;

/** The window a checked request names, in epoch ms; `until` defaults to `now`. */
export function redeliveryWindow(input: RedeliverInput, now: number): { since: number; until: number } {
  return { since: Date.parse(input.since), until: input.until === undefined ? now : Date.parse(input.until) };
}

/** What the schema cannot say: `since` after `until`. */
export function redeliveryWindowProblems(body: unknown): ErrorDetail[] {
  const b = body as Partial<Record<'since' | 'until', unknown>>;
  if (typeof b?.since !== 'string' || typeof b.until !== 'string') return [];
  const since = Date.parse(b.since);
  const until = Date.parse(b.until);
  return since > until ? [{ path: '/until', message: 'must not be before since' }] : [];
}

/**
 * A bulk redelivery's time as the CLI and the web UI's form take it: a duration back
 * from `now` (`24h`, `90m`, `7d`) becomes that time; anything else is passed on as
 * given, for REDELIVER_INPUT's check (an RFC 3339 time). The API takes times only.
 */
export function timeOrDuration(value: string, now: number): string {
  const ms = parseDuration(value);
  return ms === undefined ? value.trim() : new Date(now - ms).toISOString();
}

const redeliverSchemaProblems = compileDetails(REDELIVER_INPUT);

/**
 * A bulk redelivery's window as the CLI and the web UI take it (each a duration back from
 * `now` or an RFC 3339 time; `until` optional), checked as the API checks its body:
 * the request ready for redeliveryWindow(), or every problem named.
 */
export function checkRedeliveryTimes(
  since: string,
  until: string | undefined,
  now: number,
): { input: RedeliverInput; problems?: undefined } | { problems: ErrorDetail[] } {
  const input = { since: timeOrDuration(since, now), ...(until === undefined ? {} : { until: timeOrDuration(until, now) }) };
  const problems = [...redeliverSchemaProblems(input), ...redeliveryWindowProblems(input)];
  return problems.length > 0 ? { problems } : { input };
}
