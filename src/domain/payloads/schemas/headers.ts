import { EVENT_TYPES } from '../../../events/types.ts';

/** One HTTP header of a webhook delivery, described for integrators and the OpenAPI document. */
export interface DeliveryHeader {
  /** As Wharf spells it; HTTP header names are case-insensitive. */
  name: string;
  description: string;
  /** True when every delivery carries it; false for the Standard Webhooks headers, sent only for a `whsec_` secret, and GitHub's, sent only with `header_style: "github"`. */
  always: boolean;
  /** When a header is not always sent: `whsec` (a `whsec_` secret) or `github` (a webhook of `header_style: "github"`). */
  when?: 'whsec' | 'github';
  /** The value's JSON Schema (a string). */
  schema: { type: 'string'; pattern?: string; format?: string; enum?: readonly string[] };
}

const UUID = { type: 'string', format: 'uuid' } as const;

/**
 * Every header Wharf sets on a delivery (SPEC §5.3), in the order it sets them; the
 * transport's own (`Host`, `Content-Length`, `Connection`) are left out. Custom headers
 * of a webhook (when it has some) come after these and can never replace them.
 */
export const DELIVERY_HEADERS: readonly DeliveryHeader[] = [
  {
    name: 'Content-Type',
    always: true,
    description: 'Always `application/json`: the body is one JSON object.',
    schema: { type: 'string', enum: ['application/json'] },
  },
  { name: 'User-Agent', always: true, description: '`Wharf-Hookshot/<version>`.', schema: { type: 'string', pattern: '^Wharf-Hookshot/\\d+\\.\\d+\\.\\d+' } },
  {
    name: 'X-Service-Event',
    always: true,
    description: "The event type; the same as the body's `event`.",
    schema: { type: 'string', enum: [...EVENT_TYPES, 'ping'] },
  },
  {
    name: 'X-Service-Delivery',
    always: true,
    description: 'One UUID per event and webhook, the same on every attempt and every redelivery: deduplicate on it.',
    schema: UUID,
  },
  {
    name: 'X-Service-Delivery-Attempt',
    always: true,
    description: 'Which attempt this is, from 1 (4 at most per delivery; a redelivery starts again at 1).',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
  },
  { name: 'X-Service-Hook-ID', always: true, description: 'The id of the webhook this delivery is for.', schema: { type: 'string', pattern: '^[1-9][0-9]*$' } },
  {
    name: 'X-Service-Signature',
    always: true,
    description: '`sha256=` and the lowercase hex HMAC-SHA256 of the exact body bytes, keyed by the UTF-8 bytes of the webhook secret.',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  },
  {
    name: 'X-GitHub-Event',
    always: false,
    when: 'github',
    description: 'Only with `header_style: "github"`: the same value as `X-Service-Event`.',
    schema: { type: 'string', enum: [...EVENT_TYPES, 'ping'] },
  },
  {
    name: 'X-GitHub-Delivery',
    always: false,
    when: 'github',
    description: 'Only with `header_style: "github"`: the same value as `X-Service-Delivery`.',
    schema: UUID,
  },
  {
    name: 'X-GitHub-Hook-ID',
    always: false,
    when: 'github',
    description: 'Only with `header_style: "github"`: the same value as `X-Service-Hook-ID`.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
  },
  {
    name: 'X-Hub-Signature-256',
    always: false,
    when: 'github',
    description: 'Only with `header_style: "github"`: the same value as `X-Service-Signature` (GitHub\'s form, `sha256=` and the hex HMAC).',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  },
  {
    name: 'webhook-id',
    always: false,
    when: 'whsec',
    description: 'Standard Webhooks (only for a `whsec_` secret): the same value as `X-Service-Delivery`.',
    schema: UUID,
  },
  {
    name: 'webhook-timestamp',
    always: false,
    when: 'whsec',
    description:
      'Standard Webhooks (only for a `whsec_` secret): when this attempt was signed, in Unix seconds; new on every attempt, so receivers can refuse replays.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    always: false,
    when: 'whsec',
    description:
      'Standard Webhooks (only for a `whsec_` secret): `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64-decoded part of the secret after `whsec_`. A space-separated list; check each entry.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$' },
  },
];
