import { importIssues } from '../domain/bulkIssues.ts';
import { MAX_IMPORTED_NUMBER } from '../domain/issues.ts';
import type { ErrorDetail } from '../http/errors.ts';
import { text } from './fields.ts';
import { ISSUE_FIELDS } from './issues.ts';
import { route, type Route } from './route.ts';

/** Body limit of the bulk import (SPEC §4). */
export const BULK_LIMIT = 50 * 1024 * 1024;

/** Issues per request at most (SPEC §8.2). */
export const BULK_MAX_ISSUES = 10_000;

const time = { type: 'string', format: 'date-time' } as const;

const BulkRequest = {
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

const BulkResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['created', 'updated', 'skipped'],
  properties: { created: { type: 'integer', minimum: 0 }, updated: { type: 'integer', minimum: 0 }, skipped: { type: 'integer', minimum: 0 } },
} as const;

/** Each number used twice in one request, named at every later use; records without a whole number are the schema's business. */
function duplicateNumbers(body: unknown): ErrorDetail[] {
  const issues = (body as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues)) return [];
  const first = new Map<number, number>();
  const details: ErrorDetail[] = [];
  issues.forEach((issue, i) => {
    const number = (issue as { number?: unknown } | null)?.number;
    if (!Number.isInteger(number)) return;
    const seen = first.get(number as number);
    if (seen === undefined) first.set(number as number, i);
    else details.push({ path: `/issues/${i}/number`, message: `duplicates /issues/${seen}/number` });
  });
  return details;
}

/** POST /repos/{org}/{repo}/issues/bulk: org owners import issues with their numbers (SPEC §8.2). */
export const bulkIssueRoutes: Route[] = [
  route({
    id: 'importIssues',
    method: 'post',
    path: '/repos/{org}/{repo}/issues/bulk',
    summary: 'Import up to 10,000 issues with their numbers, in one transaction',
    tag: 'issues',
    access: 'repo:admin',
    body: BulkRequest,
    bodyLimit: BULK_LIMIT,
    // Duplicate numbers are reported in the same 422 as the schema's failures.
    bodyCheck: duplicateNumbers,
    answers: { 200: BulkResultSchema },
    errors: [409],
    handler: async ({ body }, ctx, { db }) => {
      ctx.body = await importIssues(db, ctx.state.repo, ctx.state.user, body.issues, body.on_conflict);
    },
  }),
];
