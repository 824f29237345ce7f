import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema, shaSchema, type BodyOf } from './common.ts';

/** The `agent` event's actions (SPEC §6). */
export const AGENT_ACTIONS = ['performed'] as const;

/** The `agent` payload: what an automated agent did and to what. */
export const agentPayloadSchema = {
  title: 'agent',
  description: 'An automated agent reported an action it performed.',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'agent', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'agent' },
    action: { type: 'string', enum: AGENT_ACTIONS },
    agent: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'action', 'summary', 'target'],
      properties: {
        name: { type: 'string', description: 'The agent, e.g. `triage-bot`.' },
        action: { type: 'string', description: "The agent's own word for what it did, e.g. `labeled`." },
        summary: { type: 'string' },
        target: {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'id'],
          properties: {
            type: { type: 'string', enum: ['issue', 'pull_request', 'commit'] },
            id: { anyOf: [idSchema, shaSchema], description: 'The issue or pull request number, or the full commit id.' },
          },
        },
      },
    },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** An `agent` payload. */
export type AgentPayload = FromSchema<typeof agentPayloadSchema>;

/** What the `agent` builder returns: the fields beyond the common ones. */
export type AgentBody = BodyOf<typeof agentPayloadSchema>;
