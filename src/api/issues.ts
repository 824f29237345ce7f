import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { createIssue, findIssue, listIssues, updateIssue, type Issue } from '../domain/issues.ts';
import { ISSUE_PATCH, NEW_ISSUE } from '../domain/inputs/issues.ts';
import { repoUrl } from '../domain/payloads/urls.ts';
import { notFound } from '../http/errors.ts';
import { iso } from './present.ts';
import { LIST_QUERY, listOptions, setNextLink } from './listQuery.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, listOf, repoParams, TEXT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';

/** The API form of an issue. */
export const IssueSchema = named('Issue', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'number', 'title', 'body', 'state', 'labels', 'assignees', 'user', 'url', 'created_at', 'updated_at', 'closed_at'],
  properties: {
    id: ID,
    number: ID,
    title: { type: 'string' },
    body: { type: 'string' },
    state: { type: 'string', enum: ['open', 'closed'] },
    labels: { type: 'array', items: { type: 'string' } },
    assignees: { type: 'array', items: { type: 'string' } },
    user: { ...TEXT_OR_NULL, description: "The author's login (null once the account is gone, or for imported issues without one)." },
    url: { type: 'string', format: 'uri' },
    created_at: TIME,
    updated_at: TIME,
    closed_at: TIME_OR_NULL,
  },
} as const);

const ISSUE_PARAMS = repoParams('number');

/** The API form of an issue. */
export function presentIssue(config: Config, repo: Repository, issue: Issue): Answer<typeof IssueSchema> {
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
export const issueRoutes: Route[] = [
  route({
    id: 'createIssue',
    method: 'post',
    path: '/repos/{org}/{repo}/issues',
    summary: 'Open an issue',
    tag: 'issues',
    access: 'repo:write',
    body: NEW_ISSUE,
    answers: { 201: IssueSchema },
    // Every number up to the column's limit used (after imports of high numbers).
    errors: [409],
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const issue = await createIssue(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/issues/${issue.number}`);
      ctx.body = presentIssue(services.config, ctx.state.repo, issue);
    },
  }),
  route({
    id: 'listIssues',
    method: 'get',
    path: '/repos/{org}/{repo}/issues',
    summary: 'Issues, newest first, a page at a time',
    tag: 'issues',
    access: 'repo:read',
    query: LIST_QUERY,
    answers: { 200: listOf(IssueSchema) },
    headers: { 200: ['Link'] },
    handler: async ({ query }, ctx, { db, config }) => {
      const issues = await listIssues(db, ctx.state.repo, { kind: 'issue', ...listOptions(query) });
      setNextLink(
        ctx,
        query,
        issues.map((i) => i.number),
      );
      ctx.body = issues.map((i) => presentIssue(config, ctx.state.repo, i));
    },
  }),
  route({
    id: 'getIssue',
    method: 'get',
    path: '/repos/{org}/{repo}/issues/{number}',
    summary: 'An issue',
    tag: 'issues',
    access: 'repo:read',
    params: ISSUE_PARAMS,
    notFound: 'Issue not found',
    answers: { 200: IssueSchema },
    handler: async ({ params }, ctx, { db, config }) => {
      const issue = await findIssue(db, ctx.state.repo, params.number, 'issue');
      if (!issue) throw notFound('Issue not found');
      ctx.body = presentIssue(config, ctx.state.repo, issue);
    },
  }),
  route({
    id: 'updateIssue',
    method: 'patch',
    path: '/repos/{org}/{repo}/issues/{number}',
    summary: 'Edit, close or reopen an issue',
    tag: 'issues',
    access: 'repo:write',
    params: ISSUE_PARAMS,
    notFound: 'Issue not found',
    body: ISSUE_PATCH,
    answers: { 200: IssueSchema },
    handler: async ({ params, body }, ctx, services) => {
      const issue = await updateIssue(services, ctx.state.repo, ctx.state.user, params.number, body);
      if (!issue) throw notFound('Issue not found');
      ctx.body = presentIssue(services.config, ctx.state.repo, issue);
    },
  }),
];
