import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { createPull, findPull, listPulls, updatePull, type PullRequest } from '../domain/pulls.ts';
import { mergePull } from '../domain/merge.ts';
import { repoUrl } from '../domain/payloads/urls.ts';
import { SHA } from '../domain/inputs/git.ts';
import { MERGE, NEW_PULL, PULL_PATCH } from '../domain/inputs/pulls.ts';
import { notFound } from '../http/errors.ts';
import { iso } from './present.ts';
import { LIST_QUERY, listOptions, setNextLink } from './listQuery.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, listOf, repoParams, TEXT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';

const branchTip = { type: 'object', additionalProperties: false, required: ['ref', 'sha'], properties: { ref: { type: 'string' }, sha: SHA } } as const;

const PullSchema = named('PullRequest', {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'number',
    'title',
    'body',
    'state',
    'merged',
    'merged_at',
    'merge_commit_sha',
    'head',
    'base',
    'user',
    'url',
    'created_at',
    'updated_at',
    'closed_at',
  ],
  properties: {
    id: ID,
    number: ID,
    title: { type: 'string' },
    body: { type: 'string' },
    state: { type: 'string', enum: ['open', 'closed'] },
    merged: { type: 'boolean' },
    merged_at: TIME_OR_NULL,
    merge_commit_sha: { type: ['string', 'null'], pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' },
    head: branchTip,
    base: branchTip,
    user: TEXT_OR_NULL,
    url: { type: 'string', format: 'uri' },
    created_at: TIME,
    updated_at: TIME,
    closed_at: TIME_OR_NULL,
  },
} as const);

const MergeResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sha', 'merged', 'fast_forward', 'message'],
  properties: { sha: SHA, merged: { type: 'boolean', const: true }, fast_forward: { type: 'boolean' }, message: { type: 'string' } },
} as const;

const PULL_PARAMS = repoParams('number');

/** The API form of a pull request. */
function presentPull(config: Config, repo: Repository, p: PullRequest): Answer<typeof PullSchema> {
  return {
    id: p.id,
    number: p.number,
    title: p.title,
    body: p.body,
    state: p.state,
    merged: p.merged,
    merged_at: iso(p.merged_at),
    merge_commit_sha: p.merge_commit_sha,
    head: { ref: p.head_ref, sha: p.head_sha },
    base: { ref: p.base_ref, sha: p.base_sha },
    user: p.author,
    url: repoUrl(config, repo, 'pulls', p.number),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
    closed_at: iso(p.closed_at),
  };
}

const pullRoute = { tag: 'pull requests', params: PULL_PARAMS, notFound: 'Pull request not found' } as const;

/** Pull requests: open, list, read, edit, close, reopen and merge (SPEC §6 producer of `pull_request`). */
export const pullRoutes: Route[] = [
  route({
    id: 'createPull',
    method: 'post',
    path: '/repos/{org}/{repo}/pulls',
    summary: 'Open a pull request',
    tag: 'pull requests',
    access: 'repo:write',
    body: NEW_PULL,
    answers: { 201: PullSchema },
    errors: [409],
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const pull = await createPull(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/pulls/${pull.number}`);
      ctx.body = presentPull(services.config, ctx.state.repo, pull);
    },
  }),
  route({
    id: 'listPulls',
    method: 'get',
    path: '/repos/{org}/{repo}/pulls',
    summary: 'Pull requests, newest first, a page at a time',
    tag: 'pull requests',
    access: 'repo:read',
    query: LIST_QUERY,
    answers: { 200: listOf(PullSchema) },
    headers: { 200: ['Link'] },
    handler: async ({ query }, ctx, { db, config }) => {
      const pulls = await listPulls(db, ctx.state.repo, listOptions(query));
      setNextLink(
        ctx,
        query,
        pulls.map((p) => p.number),
      );
      ctx.body = pulls.map((p) => presentPull(config, ctx.state.repo, p));
    },
  }),
  route({
    ...pullRoute,
    id: 'getPull',
    method: 'get',
    path: '/repos/{org}/{repo}/pulls/{number}',
    summary: 'A pull request',
    access: 'repo:read',
    answers: { 200: PullSchema },
    handler: async ({ params }, ctx, { db, config }) => {
      const pull = await findPull(db, ctx.state.repo, params.number);
      if (!pull) throw notFound('Pull request not found');
      ctx.body = presentPull(config, ctx.state.repo, pull);
    },
  }),
  route({
    ...pullRoute,
    id: 'updatePull',
    method: 'patch',
    path: '/repos/{org}/{repo}/pulls/{number}',
    summary: 'Edit, close or reopen a pull request',
    access: 'repo:write',
    body: PULL_PATCH,
    answers: { 200: PullSchema },
    handler: async ({ params, body }, ctx, services) => {
      const pull = await updatePull(services, ctx.state.repo, ctx.state.user, params.number, body);
      if (!pull) throw notFound('Pull request not found');
      ctx.body = presentPull(services.config, ctx.state.repo, pull);
    },
  }),
  route({
    ...pullRoute,
    id: 'mergePull',
    method: 'put',
    path: '/repos/{org}/{repo}/pulls/{number}/merge',
    summary: 'Merge a pull request with a merge commit (or a fast-forward)',
    access: 'repo:write',
    body: MERGE,
    bodyOptional: true,
    answers: { 200: MergeResultSchema },
    errors: [409],
    handler: async ({ params, body }, ctx, services) => {
      const result = await mergePull(services, ctx.state.repo, ctx.state.user, params.number, body.sha);
      if (!result) throw notFound('Pull request not found');
      ctx.body = { sha: result.sha, merged: true, fast_forward: result.fastForward, message: 'Pull request successfully merged' } satisfies Answer<
        typeof MergeResultSchema
      >;
    },
  }),
];
