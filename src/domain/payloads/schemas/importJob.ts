import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema } from './common.ts';

/** The `import` event's actions (SPEC §6). */
export const IMPORT_ACTIONS = ['succeeded', 'failed', 'canceled'] as const;

/** The `import` payload: an import job of the organization ended (GitHub's `repository_import`); organization webhooks only. */
export const importPayloadSchema = {
  title: 'import',
  description: "An import job into the organization ended: succeeded, failed or canceled (GitHub's `repository_import`). Organization webhooks only.",
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'import', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'import' },
    action: { type: 'string', enum: IMPORT_ACTIONS },
    import: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'source_url', 'status', 'error', 'mirror'],
      properties: {
        id: idSchema,
        source_url: { type: 'string', description: 'The source, without credentials.' },
        status: { type: 'string', enum: IMPORT_ACTIONS },
        error: { type: ['string', 'null'], description: 'Why it failed; null otherwise.' },
        mirror: { type: 'boolean', description: 'Whether the repository stays a pull mirror of its source.' },
      },
    },
    repository: { anyOf: [repositorySchema, { type: 'null' }], description: 'The repository the import made; null when it made none.' },
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** An `import` payload. */
export type ImportPayload = FromSchema<typeof importPayloadSchema>;
