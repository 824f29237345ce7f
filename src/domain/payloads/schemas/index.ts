import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { EventType } from '../../../events/types.ts';
import { agentPayloadSchema } from './agent.ts';
import { commentPayloadSchema } from './comment.ts';
import { issuePayloadSchema } from './issue.ts';
import { pingPayloadSchema } from './ping.ts';
import { pipelinePayloadSchema } from './pipeline.ts';
import { pullRequestPayloadSchema } from './pullRequest.ts';
import { pushPayloadSchema } from './push.ts';
import { releasePayloadSchema } from './release.ts';
import { repositoryPayloadSchema } from './repository.ts';
import { importPayloadSchema } from './importJob.ts';

export { DELIVERY_HEADERS, type DeliveryHeader } from './headers.ts';

/**
 * The JSON Schema (draft 2020-12) of every webhook payload, keyed by event type: the
 * request bodies of the OpenAPI document's `webhooks`. The builders' return types are
 * derived from these, so a payload cannot drift from its contract. A new event type
 * (`repository`, `import`) must add its schema here: the key set is checked against the
 * event types.
 */
export const PAYLOAD_SCHEMAS = {
  push: pushPayloadSchema,
  pull_request: pullRequestPayloadSchema,
  issue: issuePayloadSchema,
  comment: commentPayloadSchema,
  release: releasePayloadSchema,
  pipeline: pipelinePayloadSchema,
  agent: agentPayloadSchema,
  repository: repositoryPayloadSchema,
  import: importPayloadSchema,
  ping: pingPayloadSchema,
} as const satisfies Record<EventType | 'ping', JSONSchema>;

/** The event types that have a payload schema. */
export type PayloadType = keyof typeof PAYLOAD_SCHEMAS;

/** The payload of one event type, as its schema says. */
export type Payload<K extends PayloadType> = FromSchema<(typeof PAYLOAD_SCHEMAS)[K]>;
