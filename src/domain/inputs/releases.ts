import type { FromSchema } from 'json-schema-to-ts';
import { text } from './text.ts';
import { worded } from '../../util/schema.ts';

// git's own rules are checked too; this keeps out what could never be a ref name.
const refName = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: worded('^[^-\\s\\u0000][^\\u0000]*$', 'must be a tag name: not starting with "-" or white space, no NUL character'),
} as const;

/** A release to create. */
export const NEW_RELEASE = {
  type: 'object',
  additionalProperties: false,
  required: ['tag_name'],
  properties: {
    tag_name: refName,
    name: text(0, 255),
    body: text(0, 262144),
    draft: { type: 'boolean' },
    prerelease: { type: 'boolean' },
    target_commitish: refName,
  },
} as const;

export type NewRelease = FromSchema<typeof NEW_RELEASE>;
