import type { FromSchema } from 'json-schema-to-ts';
import { MAX_INT } from './numbers.ts';
import { text } from './text.ts';

/** What an agent acted on. */
export const TARGET_TYPE = { type: 'string', enum: ['issue', 'pull_request', 'commit'] } as const;

// A number for issues and pull requests, a full sha for commits; the pairing is checked against the repository.
export const TARGET_ID = {
  anyOf: [
    { type: 'integer', minimum: 1, maximum: MAX_INT },
    { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' },
  ],
} as const;

/** An agent's action to record. */
export const NEW_AGENT_ACTION = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'action', 'summary', 'target'],
  properties: {
    name: text(1, 255),
    action: text(1, 255),
    summary: text(0, 65536),
    target: { type: 'object', additionalProperties: false, required: ['type', 'id'], properties: { type: TARGET_TYPE, id: TARGET_ID } },
  },
} as const;

export type NewAgentAction = FromSchema<typeof NEW_AGENT_ACTION>;
