import type { FromSchema } from 'json-schema-to-ts';
import { MAX_IMPORTED_NUMBER } from '../issues.ts';
import { ISSUE_FIELDS } from './issues.ts';
import { text } from './text.ts';

/** Issues per request at most (SPEC §8.2). */
export const BULK_MAX_ISSUES = 10_000;

const time = { type: 'string', format: 'date-time' } as const;

/** A bulk import: issues with their numbers, and what a number already used means. */
export const BULK_REQUEST = {
  type: 'object',
  additionalProperties: false,
  required: ['issues'],
  properties: {
    issues: {
      type: 'array',
      maxItems: BULK_MAX_ISSUES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['number', 'title'],
        properties: {
          // Bounded well below the column's limit, so numbering continues after the highest imported one.
          number: { type: 'integer', minimum: 1, maximum: MAX_IMPORTED_NUMBER },
          title: ISSUE_FIELDS.title,
          body: ISSUE_FIELDS.body,
          labels: ISSUE_FIELDS.labels,
          // Logins from the forge the issues come from, kept as given.
          assignees: { type: 'array', maxItems: 100, items: text(1, 255) },
          state: ISSUE_FIELDS.state,
          created_at: time,
          closed_at: time,
        },
      },
    },
    on_conflict: { type: 'string', enum: ['error', 'skip', 'update'], default: 'error' },
  },
} as const;

export type BulkRequest = FromSchema<typeof BULK_REQUEST>;

/** One record of a bulk import, already validated. */
export type BulkIssue = BulkRequest['issues'][number];

/** What a number already used in the repository means: a 409, leave it, or overwrite that issue. */
export type OnConflict = BulkRequest['on_conflict'];
