import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { createPipeline, findPipeline, setPipelineStatus, type Pipeline } from '../domain/pipelines.ts';
import { repoUrl } from '../domain/payloads/urls.ts';
import { notFound } from '../http/errors.ts';
import { SHA } from '../domain/inputs/git.ts';
import { NEW_PIPELINE, PIPELINE_STATUS, STATUS_CHANGE } from '../domain/inputs/pipelines.ts';
import { iso } from './present.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, repoParams, TIME } from './schemas.ts';

const PipelineSchema = named('Pipeline', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'ref', 'sha', 'status', 'url', 'created_at', 'updated_at'],
  properties: {
    id: ID,
    name: { type: 'string' },
    ref: { type: 'string' },
    sha: SHA,
    status: PIPELINE_STATUS,
    url: { type: 'string', format: 'uri' },
    created_at: TIME,
    updated_at: TIME,
  },
} as const);

const PIPELINE_PARAMS = repoParams('id');

/** The API form of a pipeline. */
function presentPipeline(config: Config, repo: Repository, p: Pipeline): Answer<typeof PipelineSchema> {
  return {
    id: p.id,
    name: p.name,
    ref: p.ref,
    sha: p.sha,
    status: p.status,
    url: repoUrl(config, repo, 'pipelines', p.id),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

/** CI pipelines reported by outside systems (SPEC §6 producer of `pipeline`). */
export const pipelineRoutes: Route[] = [
  route({
    id: 'createPipeline',
    method: 'post',
    path: '/repos/{org}/{repo}/pipelines',
    summary: 'Report a pipeline run',
    tag: 'pipelines',
    access: 'repo:write',
    body: NEW_PIPELINE,
    answers: { 201: PipelineSchema },
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const pipeline = await createPipeline(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/pipelines/${pipeline.id}`);
      ctx.body = presentPipeline(services.config, ctx.state.repo, pipeline);
    },
  }),
  route({
    id: 'getPipeline',
    method: 'get',
    path: '/repos/{org}/{repo}/pipelines/{id}',
    summary: 'A pipeline run',
    tag: 'pipelines',
    access: 'repo:read',
    params: PIPELINE_PARAMS,
    notFound: 'Pipeline not found',
    answers: { 200: PipelineSchema },
    handler: async ({ params }, ctx, { db, config }) => {
      const pipeline = await findPipeline(db, ctx.state.repo, params.id);
      if (!pipeline) throw notFound('Pipeline not found');
      ctx.body = presentPipeline(config, ctx.state.repo, pipeline);
    },
  }),
  route({
    id: 'setPipelineStatus',
    method: 'patch',
    path: '/repos/{org}/{repo}/pipelines/{id}',
    summary: "Change a pipeline run's status",
    tag: 'pipelines',
    access: 'repo:write',
    params: PIPELINE_PARAMS,
    notFound: 'Pipeline not found',
    body: STATUS_CHANGE,
    answers: { 200: PipelineSchema },
    handler: async ({ params, body }, ctx, services) => {
      const pipeline = await setPipelineStatus(services, ctx.state.repo, ctx.state.user, params.id, body.status);
      if (!pipeline) throw notFound('Pipeline not found');
      ctx.body = presentPipeline(services.config, ctx.state.repo, pipeline);
    },
  }),
];
