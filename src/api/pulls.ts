import type Router from '@koa/router';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import type { Repository } from '../domain/repos.ts';
import { createPull, findPull, listPulls, updatePull, type PullRequest } from '../domain/pulls.ts';
import { mergePull } from '../domain/merge.ts';
import { repoUrl } from '../events/payloads/urls.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { jsonBody } from '../http/body.ts';
import { notFound } from '../http/errors.ts';
import { intParam } from './fields.ts';
import { iso } from './present.ts';
import { parseListQuery, setNextLink } from './listQuery.ts';
import { ISSUE_FIELDS } from './issues.ts';

// A branch name as a field; git's rules are applied by looking the branch up.
const branch = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^-\\s\\u0000][^\\s\\u0000]*$' } as const;

const parseNewPull = compile({
  type: 'object',
  additionalProperties: false,
  required: ['title', 'head'],
  properties: { title: ISSUE_FIELDS.title, body: ISSUE_FIELDS.body, head: branch, base: branch },
} as const);

const parsePullPatch = compile({
  type: 'object',
  additionalProperties: false,
  properties: { title: ISSUE_FIELDS.title, body: ISSUE_FIELDS.body, state: ISSUE_FIELDS.state, base: branch },
} as const);

const parseMerge = compile({
  type: 'object',
  additionalProperties: false,
  properties: { sha: { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' }, merge_method: { type: 'string', enum: ['merge'] } },
} as const);

/** The API form of a pull request. */
function presentPull(config: Config, repo: Repository, p: PullRequest) {
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

/** Pull requests: open, list, read, edit, close, reopen and merge (SPEC §6 producer of `pull_request`). */
export function pullRoutes(router: Router, services: Services) {
  const { db, config } = services;
  const base = '/repos/:org/:repo/pulls';

  router.post(base, repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const input = parseNewPull(ctx.request.body);
    const pull = await createPull(services, ctx.state.repo, ctx.state.user, input);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/pulls/${pull.number}`);
    ctx.body = presentPull(config, ctx.state.repo, pull);
  });

  router.get(base, repoAccess(db, 'read'), async (ctx) => {
    const query = parseListQuery(ctx);
    const pulls = await listPulls(db, ctx.state.repo, query);
    setNextLink(ctx, query, pulls.map((p) => p.number));
    ctx.body = pulls.map((p) => presentPull(config, ctx.state.repo, p));
  });

  router.get(`${base}/:number`, repoAccess(db, 'read'), async (ctx) => {
    const pull = await findPull(db, ctx.state.repo, intParam(ctx.params.number, 'Pull request not found'));
    if (!pull) throw notFound('Pull request not found');
    ctx.body = presentPull(config, ctx.state.repo, pull);
  });

  router.patch(`${base}/:number`, repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const number = intParam(ctx.params.number, 'Pull request not found');
    const patch = parsePullPatch(ctx.request.body);
    const pull = await updatePull(services, ctx.state.repo, ctx.state.user, number, patch);
    if (!pull) throw notFound('Pull request not found');
    ctx.body = presentPull(config, ctx.state.repo, pull);
  });

  router.put(`${base}/:number/merge`, repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const number = intParam(ctx.params.number, 'Pull request not found');
    const input = parseMerge(ctx.request.body ?? {});
    const result = await mergePull(services, ctx.state.repo, ctx.state.user, number, input.sha);
    if (!result) throw notFound('Pull request not found');
    ctx.body = { sha: result.sha, merged: true, fast_forward: result.fastForward, message: 'Pull request successfully merged' };
  });
}
