import type { FromSchema } from 'json-schema-to-ts';
import { organizationSchema, repositorySchema, senderSchema } from './common.ts';

/** The `repository` event's actions (SPEC §6). */
export const REPOSITORY_ACTIONS = ['created', 'deleted', 'mirror_cutover'] as const;

/** The `repository` payload: sent to organization webhooks only (SPEC §5.4). */
export const repositoryPayloadSchema = {
  title: 'repository',
  description:
    'A repository of the organization was created (by the API, a push to create or an import), deleted, or stopped being a pull mirror (`mirror_cutover`). Organization webhooks only.',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'repository' },
    action: { type: 'string', enum: REPOSITORY_ACTIONS },
    repository: { ...repositorySchema, description: 'The repository; for `deleted`, as it was.' },
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `repository` payload. */
export type RepositoryEventPayload = FromSchema<typeof repositoryPayloadSchema>;
