import type { FromSchema } from 'json-schema-to-ts';
import { EVENT_TYPES } from '../../../events/types.ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema } from './common.ts';

/** The `ping` payload: sent by the ping endpoint and when an active webhook is created. */
export const pingPayloadSchema = {
  title: 'ping',
  description: 'Sent when a webhook is created (active) and by the ping endpoint, to that webhook alone, whatever its events.',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'zen', 'hook_id', 'hook', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'ping' },
    zen: { type: 'string', description: 'A random line of wisdom.' },
    hook_id: idSchema,
    hook: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'url', 'content_type', 'events'],
      description: 'The webhook as it is now (never its secret or custom header values).',
      properties: {
        id: idSchema,
        url: { type: 'string', format: 'uri' },
        content_type: { type: 'string', enum: ['json'] },
        events: { type: 'array', minItems: 1, items: { type: 'string', enum: [...EVENT_TYPES, '*'] } },
      },
    },
    repository: { anyOf: [repositorySchema, { type: 'null' }], description: 'The repository of a repository webhook; null for an organization webhook.' },
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `ping` payload. */
export type PingPayload = FromSchema<typeof pingPayloadSchema>;
