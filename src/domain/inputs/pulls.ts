import type { FromSchema } from 'json-schema-to-ts';
import { SHA } from './git.ts';
import { ISSUE_FIELDS } from './issues.ts';
import { worded } from '../../util/schema.ts';

// A branch name as a field; git's rules are applied by looking the branch up.
const branch = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: worded('^[^-\\s\\u0000][^\\s\\u0000]*$', 'must be a branch name: no white space or NUL character, not starting with "-"'),
} as const;

/** A pull request to open, from `head` into `base` (default: the repository's default branch). */
export const NEW_PULL = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'head'],
  properties: { title: ISSUE_FIELDS.title, body: ISSUE_FIELDS.body, head: branch, base: branch },
} as const;

/** Fields a caller may change on a pull request. */
export const PULL_PATCH = {
  type: 'object',
  additionalProperties: false,
  properties: { title: ISSUE_FIELDS.title, body: ISSUE_FIELDS.body, state: ISSUE_FIELDS.state, base: branch },
} as const;

/** A merge request's options. */
export const MERGE = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sha: { ...SHA, description: 'The head the caller reviewed: the merge is refused (409) if the branch moved since.' },
    merge_method: { type: 'string', enum: ['merge'] },
  },
} as const;

export type NewPull = FromSchema<typeof NEW_PULL>;
export type PullPatch = FromSchema<typeof PULL_PATCH>;
export type MergeOptions = FromSchema<typeof MERGE>;
