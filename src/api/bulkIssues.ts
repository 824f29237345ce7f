import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { importIssues } from '../domain/bulkIssues.ts';
import { MAX_IMPORTED_NUMBER } from '../domain/issues.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { text } from './fields.ts';
import { jsonBody } from '../http/body.ts';
import { HttpError, validationFailed, type ErrorDetail } from '../http/errors.ts';
import { ISSUE_FIELDS } from './issues.ts';

/** Body limit of the bulk import (SPEC §4). */
export const BULK_LIMIT = 50 * 1024 * 1024;

/** Issues per request at most (SPEC §8.2). */
export const BULK_MAX_ISSUES = 10_000;

const time = { type: 'string', format: 'date-time' } as const;

const parseBulk = compile({
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
} as const);

/** Each number used twice in one request, named at every later use; records without a whole number are the schema's business. */
function duplicateNumbers(issues: unknown): ErrorDetail[] {
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

/** Validates the whole request, reporting schema failures and duplicate numbers together in one 422. */
function parseRequest(body: unknown) {
  const details = duplicateNumbers((body as { issues?: unknown } | null)?.issues);
  try {
    const input = parseBulk(body);
    if (details.length === 0) return input;
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    details.unshift(...err.details);
  }
  throw validationFailed(details);
}

/** POST /repos/:org/:repo/issues/bulk: org owners import issues with their numbers (SPEC §8.2). */
export function bulkIssueRoutes(router: Router, { db }: Services) {
  router.post('/repos/:org/:repo/issues/bulk', repoAccess(db, 'admin'), jsonBody(BULK_LIMIT), async (ctx) => {
    const input = parseRequest(ctx.request.body);
    ctx.body = await importIssues(db, ctx.state.repo, ctx.state.user, input.issues, input.on_conflict);
  });
}
