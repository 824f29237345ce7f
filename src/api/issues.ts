import type Router from '@koa/router';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import type { Repository } from '../domain/repos.ts';
import { createIssue, findIssue, listIssues, updateIssue, type Issue } from '../domain/issues.ts';
import { NAME_PATTERN } from '../domain/names.ts';
import { repoUrl } from '../events/payloads/urls.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { jsonBody } from '../http/body.ts';
import { notFound } from '../http/errors.ts';
import { intParam, text } from './fields.ts';
import { iso } from './present.ts';
import { parseListQuery, setNextLink } from './listQuery.ts';

/** Schemas of issue fields, shared with the bulk import. */
export const ISSUE_FIELDS = {
  title: text(1, 1024),
  body: text(0, 262144),
  labels: { type: 'array', maxItems: 100, items: text(1, 255) },
  assignees: { type: 'array', maxItems: 100, items: { type: 'string', pattern: NAME_PATTERN } },
  state: { type: 'string', enum: ['open', 'closed'] },
} as const;

const parseNewIssue = compile({
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: { title: ISSUE_FIELDS.title, body: ISSUE_FIELDS.body, labels: ISSUE_FIELDS.labels, assignees: ISSUE_FIELDS.assignees },
} as const);

const parseIssuePatch = compile({ type: 'object', additionalProperties: false, properties: ISSUE_FIELDS } as const);

/** The API form of an issue. */
export function presentIssue(config: Config, repo: Repository, issue: Issue) {
  return {
    id: issue.id,
    number: issue.number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    labels: issue.labels,
    assignees: issue.assignees,
    user: issue.author,
    url: repoUrl(config, repo, 'issues', issue.number),
    created_at: iso(issue.created_at),
    updated_at: iso(issue.updated_at),
    closed_at: iso(issue.closed_at),
  };
}

/** Issues of a repository: open, list, read, edit, close and reopen (SPEC §6 producer of `issue`). */
export function issueRoutes(router: Router, services: Services) {
  const { db, config } = services;
  const base = '/repos/:org/:repo/issues';

  router.post(base, repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const input = parseNewIssue(ctx.request.body);
    const issue = await createIssue(services, ctx.state.repo, ctx.state.user, input);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/issues/${issue.number}`);
    ctx.body = presentIssue(config, ctx.state.repo, issue);
  });

  router.get(base, repoAccess(db, 'read'), async (ctx) => {
    const query = parseListQuery(ctx);
    const issues = await listIssues(db, ctx.state.repo, { kind: 'issue', ...query });
    setNextLink(ctx, query, issues.map((i) => i.number));
    ctx.body = issues.map((i) => presentIssue(config, ctx.state.repo, i));
  });

  router.get(`${base}/:number`, repoAccess(db, 'read'), async (ctx) => {
    const issue = await findIssue(db, ctx.state.repo, intParam(ctx.params.number, 'Issue not found'), 'issue');
    if (!issue) throw notFound('Issue not found');
    ctx.body = presentIssue(config, ctx.state.repo, issue);
  });

  router.patch(`${base}/:number`, repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const number = intParam(ctx.params.number, 'Issue not found');
    const patch = parseIssuePatch(ctx.request.body);
    const issue = await updateIssue(services, ctx.state.repo, ctx.state.user, number, patch);
    if (!issue) throw notFound('Issue not found');
    ctx.body = presentIssue(config, ctx.state.repo, issue);
  });
}
