import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema, shaSchema, type BodyOf } from './common.ts';

/** The `pipeline` event's actions (SPEC §6). */
export const PIPELINE_ACTIONS = ['status_changed'] as const;

/** A pipeline's statuses (SPEC §6); the domain's list is this one. */
export const PIPELINE_STATUSES = ['queued', 'running', 'success', 'failed', 'canceled'] as const;

/** The `pipeline` payload: a pipeline with its new status and the one before. */
export const pipelinePayloadSchema = {
  title: 'pipeline',
  description: 'A pipeline was reported or its status changed.',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'pipeline', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'pipeline' },
    action: { type: 'string', enum: PIPELINE_ACTIONS },
    pipeline: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'name', 'ref', 'sha', 'status', 'previous_status', 'url'],
      properties: {
        id: idSchema,
        name: { type: 'string' },
        ref: { type: 'string', description: 'As the reporting system gave it, e.g. `refs/heads/main` or `main`.' },
        sha: shaSchema,
        status: { type: 'string', enum: PIPELINE_STATUSES },
        previous_status: { type: ['string', 'null'], enum: [...PIPELINE_STATUSES, null], description: 'Null when the pipeline was just reported.' },
        url: { type: 'string', format: 'uri', description: 'The pipeline page.' },
      },
    },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `pipeline` payload. */
export type PipelinePayload = FromSchema<typeof pipelinePayloadSchema>;

/** What the `pipeline` builder returns: the fields beyond the common ones. */
export type PipelineBody = BodyOf<typeof pipelinePayloadSchema>;
