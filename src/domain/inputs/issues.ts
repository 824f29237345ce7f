import type { FromSchema } from 'json-schema-to-ts';
import { NAME_PATTERN } from '../names.ts';
import { text } from './text.ts';

/** Schemas of issue fields, shared with pull requests and the bulk import. */
export const ISSUE_FIELDS = {
  title: text(1, 1024),
  body: text(0, 262144),
  labels: { type: 'array', maxItems: 100, items: text(1, 255) },
  assignees: { type: 'array', maxItems: 100, items: { type: 'string', pattern: NAME_PATTERN } },
  state: { type: 'string', enum: ['open', 'closed'] },
} as const;

/** An issue to open. */
export const NEW_ISSUE = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: { title: ISSUE_FIELDS.title, body: ISSUE_FIELDS.body, labels: ISSUE_FIELDS.labels, assignees: ISSUE_FIELDS.assignees },
} as const;

/** Fields a caller may change on an issue (and, but for labels and assignees, on a pull request). */
export const ISSUE_PATCH = { type: 'object', additionalProperties: false, properties: ISSUE_FIELDS } as const;

export type NewIssue = FromSchema<typeof NEW_ISSUE>;
export type IssuePatch = FromSchema<typeof ISSUE_PATCH>;
