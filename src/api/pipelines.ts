import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { createPipeline, findPipeline, setPipelineStatus, PIPELINE_STATUSES, type Pipeline } from '../domain/pipelines.ts';
import { repoUrl } from '../domain/payloads/urls.ts';
import { notFound } from '../http/errors.ts';
import { text } from './fields.ts';
import { iso } from './present.ts';
import { named, route, type Route } from './route.ts';
import { ID, repoParams, TIME } from './schemas.ts';

const status = { type: 'string', enum: PIPELINE_STATUSES } as const;
const SHA = { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' } as const;

const NewPipeline = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'ref', 'sha'],
  properties: { name: text(1, 255), ref: text(1, 1024), sha: SHA, status: { ...status, default: 'queued' } },
} as const;

const StatusChange = { type: 'object', additionalProperties: false, required: ['status'], properties: { status } } as const;

const PipelineSchema = named('Pipeline', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'ref', 'sha', 'status', 'url', 'created_at', 'updated_at'],
  properties: {
    id: ID,
    name: { type: 'string' },
    ref: { type: 'string' },
    sha: SHA,
    status,
    url: { type: 'string', format: 'uri' },
    created_at: TIME,
    updated_at: TIME,
  },
} as const);

const PIPELINE_PARAMS = repoParams('id');

/** The API form of a pipeline. */
function presentPipeline(config: Config, repo: Repository, p: Pipeline) {
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
    body: NewPipeline,
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
    body: StatusChange,
    answers: { 200: PipelineSchema },
    handler: async ({ params, body }, ctx, services) => {
      const pipeline = await setPipelineStatus(services, ctx.state.repo, ctx.state.user, params.id, body.status);
      if (!pipeline) throw notFound('Pipeline not found');
      ctx.body = presentPipeline(services.config, ctx.state.repo, pipeline);
    },
  }),
];
