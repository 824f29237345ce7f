import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema, userLoginSchema, type BodyOf } from './common.ts';

/** The `release` event's actions (SPEC §6). */
export const RELEASE_ACTIONS = ['published'] as const;

/** The `release` payload. */
export const releasePayloadSchema = {
  title: 'release',
  description: 'A release was published (a draft raises nothing).',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'release', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'release' },
    action: { type: 'string', enum: RELEASE_ACTIONS },
    release: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'tag_name', 'name', 'body', 'draft', 'prerelease', 'target_commitish', 'published_at', 'author'],
      properties: {
        id: idSchema,
        tag_name: { type: 'string' },
        name: { type: 'string', description: 'Empty when none was given.' },
        body: { type: 'string', description: 'Markdown release notes; empty when none were given.' },
        draft: { type: 'boolean' },
        prerelease: { type: 'boolean' },
        target_commitish: { type: 'string', description: 'The branch or commit the tag was made at.' },
        published_at: { type: ['string', 'null'], format: 'date-time', description: 'Null only for a draft.' },
        author: { ...userLoginSchema, description: 'Who made the release; null when the account no longer exists.' },
      },
    },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `release` payload. */
export type ReleasePayload = FromSchema<typeof releasePayloadSchema>;

/** What the `release` builder returns: the fields beyond the common ones. */
export type ReleaseBody = BodyOf<typeof releasePayloadSchema>;
