import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema, userLoginSchema, type BodyOf } from './common.ts';

/** The `comment` event's actions (SPEC §6). */
export const COMMENT_ACTIONS = ['created', 'edited', 'deleted'] as const;

/** The `comment` payload: the comment and the issue or pull request it belongs to. */
export const commentPayloadSchema = {
  title: 'comment',
  description: 'A comment on an issue or a pull request was created, edited or deleted.',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'comment', 'issue', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'comment' },
    action: { type: 'string', enum: COMMENT_ACTIONS },
    comment: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'body', 'user', 'created_at'],
      properties: {
        id: idSchema,
        body: { type: 'string', description: 'Markdown; for `edited`, the new text; for `deleted`, the text it had.' },
        user: { ...userLoginSchema, description: 'The author; null when the account no longer exists.' },
        created_at: { type: 'string', format: 'date-time' },
      },
    },
    issue: {
      type: 'object',
      additionalProperties: false,
      required: ['number', 'title', 'state'],
      description: 'The issue or pull request commented on (they share one number sequence).',
      properties: {
        number: idSchema,
        title: { type: 'string' },
        state: { type: 'string', enum: ['open', 'closed'] },
      },
    },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `comment` payload. */
export type CommentPayload = FromSchema<typeof commentPayloadSchema>;

/** What the `comment` builder returns: the fields beyond the common ones. */
export type CommentBody = BodyOf<typeof commentPayloadSchema>;
