import type { Services } from '../services.ts';
import { HEADER_STYLES, HEALTH_STATES, WEBHOOK_EVENTS, type Webhook } from '../webhooks/model.ts';
import { withLastDelivery } from '../webhooks/listed.ts';
import { MASK, maskedHeaders } from '../webhooks/headers.ts';
import { resultLabel, type Delivery } from '../webhooks/deliveries.ts';
import type { Config } from '../config.ts';
import { iso } from './present.ts';
import { named, type Answer } from './route.ts';
import { ID, INT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';

const webhookProperties = {
  id: ID,
  url: { type: 'string' },
  content_type: { type: 'string', const: 'json' },
  events: { type: 'array', items: { type: 'string', enum: WEBHOOK_EVENTS } },
  active: { type: 'boolean' },
  branch_filter: { type: ['string', 'null'] },
  header_style: { type: 'string', enum: HEADER_STYLES },
  headers: {
    type: 'object',
    additionalProperties: { type: 'string', const: MASK },
    description: 'The custom headers\' names, each with `"********"` for its value (values are never returned); `{}` when none.',
  },
  max_rate: { ...INT_OR_NULL, description: 'Deliveries per second at most, or null: not paced.' },
  max_concurrency: { ...INT_OR_NULL, description: 'Attempts in flight at most, across all nodes, or null: no cap beyond the fair share.' },
  health: {
    type: 'object',
    additionalProperties: false,
    required: ['state'],
    description:
      'Endpoint health (SPEC §5.5): `{state: "healthy"}`, or while `paused` or `disabled` since when, why, how many deliveries are held and when the next probe goes (paused only).',
    properties: {
      state: { type: 'string', enum: HEALTH_STATES },
      since: TIME,
      reason: { type: ['string', 'null'] },
      held: { type: 'integer', minimum: 0 },
      next_probe_at: TIME_OR_NULL,
    },
  },
  created_at: TIME,
  updated_at: TIME,
  has_secret: { type: 'boolean', const: true },
  last_delivery: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['id', 'result', 'status_code', 'timestamp'],
    properties: { id: ID, result: { enum: ['Success', 'Failed', null] }, status_code: INT_OR_NULL, timestamp: TIME_OR_NULL },
  },
  deliveries_url: { type: 'string', format: 'uri' },
  ping_url: { type: 'string', format: 'uri' },
} as const;
const webhookRequired = [
  'id',
  'url',
  'content_type',
  'events',
  'active',
  'branch_filter',
  'header_style',
  'headers',
  'max_rate',
  'max_concurrency',
  'health',
  'created_at',
  'updated_at',
  'has_secret',
  'last_delivery',
  'deliveries_url',
  'ping_url',
] as const;

/** The API form of a webhook (SPEC §5.1): never its secret. */
export const WebhookSchema = named('Webhook', {
  type: 'object',
  additionalProperties: false,
  required: webhookRequired,
  properties: webhookProperties,
} as const);

/** A webhook just created: the only answer that ever carries a secret, and only one the server generated. */
export const WebhookCreatedSchema = named('WebhookCreated', {
  type: 'object',
  additionalProperties: false,
  required: webhookRequired,
  properties: { ...webhookProperties, secret: { type: 'string', description: 'Only when the request named no secret: the one generated, shown this once.' } },
} as const);

/** The API form of a webhook (SPEC §5.1): never its secret. */
export function presentWebhook(config: Config, hook: Webhook, last: Delivery | undefined, held = 0): Answer<typeof WebhookSchema> {
  const base = `${config.baseUrl}/api/v1/webhooks/${hook.id}`;
  return {
    id: hook.id,
    url: hook.url,
    content_type: hook.content_type,
    events: hook.events,
    active: hook.active,
    branch_filter: hook.branch_filter,
    header_style: hook.header_style,
    headers: maskedHeaders(hook.header_names),
    max_rate: hook.max_rate,
    max_concurrency: hook.max_concurrency,
    health: presentHealth(hook, held),
    created_at: iso(hook.created_at),
    updated_at: iso(hook.updated_at),
    has_secret: true,
    last_delivery: last
      ? {
          id: last.id,
          result: resultLabel(last.status),
          status_code: last.status_code,
          timestamp: iso(last.last_attempt_at),
        }
      : null,
    deliveries_url: `${base}/deliveries`,
    ping_url: `${base}/ping`,
  };
}

/** A webhook's health as the API shows it: the state alone when healthy. */
export function presentHealth(hook: Webhook, held: number): Answer<typeof WebhookSchema>['health'] {
  const h = hook.health;
  if (h.state === 'healthy') return { state: h.state };
  return { state: h.state, since: iso(h.since ?? hook.updated_at), reason: h.reason, held, next_probe_at: h.nextProbeAt === null ? null : iso(h.nextProbeAt) };
}

/** The API forms of webhooks, each with its last delivery. */
export async function present({ db, config }: Services, hooks: Webhook[]): Promise<Answer<typeof WebhookSchema>[]> {
  return (await withLastDelivery(db, hooks)).map(({ hook, last, held }) => presentWebhook(config, hook, last, held));
}
