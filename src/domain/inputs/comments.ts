import type { FromSchema } from 'json-schema-to-ts';
import { text } from './text.ts';

/** A comment's body, when written or edited. */
export const COMMENT_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['body'],
  properties: { body: text(1, 262144) },
} as const;

export type CommentBody = FromSchema<typeof COMMENT_BODY>;
