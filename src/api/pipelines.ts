import type Router from '@koa/router';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import type { Repository } from '../domain/repos.ts';
import { createPipeline, findPipeline, setPipelineStatus, PIPELINE_STATUSES, type Pipeline } from '../domain/pipelines.ts';
import { repoUrl } from '../events/payloads/urls.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { jsonBody } from '../http/body.ts';
import { notFound } from '../http/errors.ts';
import { intParam, text } from './fields.ts';
import { iso } from './present.ts';

const status = { type: 'string', enum: PIPELINE_STATUSES } as const;

const parseNewPipeline = compile({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'ref', 'sha'],
  properties: {
    name: text(1, 255),
    ref: text(1, 1024),
    sha: { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' },
    status: { ...status, default: 'queued' },
  },
} as const);

const parseStatus = compile({ type: 'object', additionalProperties: false, required: ['status'], properties: { status } } as const);

/** The API form of a pipeline. */
function presentPipeline(config: Config, repo: Repository, p: Pipeline) {
  return { id: p.id, name: p.name, ref: p.ref, sha: p.sha, status: p.status, url: repoUrl(config, repo, 'pipelines', p.id), created_at: iso(p.created_at), updated_at: iso(p.updated_at) };
}

/** CI pipelines reported by outside systems (SPEC §6 producer of `pipeline`). */
export function pipelineRoutes(router: Router, services: Services) {
  const { db, config } = services;

  router.post('/repos/:org/:repo/pipelines', repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const input = parseNewPipeline(ctx.request.body);
    const pipeline = await createPipeline(services, ctx.state.repo, ctx.state.user, input);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/pipelines/${pipeline.id}`);
    ctx.body = presentPipeline(config, ctx.state.repo, pipeline);
  });

  router.get('/repos/:org/:repo/pipelines/:id', repoAccess(db, 'read'), async (ctx) => {
    const pipeline = await findPipeline(db, ctx.state.repo, intParam(ctx.params.id, 'Pipeline not found'));
    if (!pipeline) throw notFound('Pipeline not found');
    ctx.body = presentPipeline(config, ctx.state.repo, pipeline);
  });

  router.patch('/repos/:org/:repo/pipelines/:id', repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const id = intParam(ctx.params.id, 'Pipeline not found');
    const input = parseStatus(ctx.request.body);
    const pipeline = await setPipelineStatus(services, ctx.state.repo, ctx.state.user, id, input.status);
    if (!pipeline) throw notFound('Pipeline not found');
    ctx.body = presentPipeline(config, ctx.state.repo, pipeline);
  });
}
