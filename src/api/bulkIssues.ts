import { importIssues } from '../domain/bulkIssues.ts';
import { BULK_REQUEST } from '../domain/inputs/bulkIssues.ts';
import type { ErrorDetail } from '../http/errors.ts';
import { route, type Answer, type Route } from './route.ts';

/** Body limit of the bulk import (SPEC §4). */
export const BULK_LIMIT = 50 * 1024 * 1024;

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
    body: BULK_REQUEST,
    bodyLimit: BULK_LIMIT,
    // Duplicate numbers are reported in the same 422 as the schema's failures.
    bodyCheck: duplicateNumbers,
    answers: { 200: BulkResultSchema },
    errors: [409],
    handler: async ({ body }, ctx, { db }) => {
      ctx.body = (await importIssues(db, ctx.state.repo, ctx.state.user, body.issues, body.on_conflict)) satisfies Answer<typeof BulkResultSchema>;
    },
  }),
];
