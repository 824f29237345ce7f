import type { RouteContext } from './context.ts';
import type { Services } from '../services.ts';
import { findOrg, roleIn, type Org } from '../domain/accounts.ts';
import { conflict, forbidden, notFound } from '../http/errors.ts';
import { cancelImportJob, createImportJob, findImportJob, listImportJobs, type ImportJob } from '../import/jobs.ts';
import { NEW_IMPORT } from '../import/input.ts';
import { retryImportJob } from '../import/retry.ts';
import { WharfError } from '../errors/wharfError.ts';
import { ImportJobSchema, presentImportJob } from './importJob.ts';
import { route, type Route } from './route.ts';
import { idParams, listOf } from './schemas.ts';

const ImportListQuery = {
  type: 'object',
  properties: {
    org: { type: 'string', description: "Only this organization's jobs (its owners only)." },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
    cursor: { type: 'integer', minimum: 1, maximum: 9_999_999_999_999, description: 'From the previous page\'s `Link: rel="next"`.' },
  },
} as const;

const JOB_PARAMS = idParams('id');

/** 404 for an organization the caller is not in (or that does not exist), 403 for a member who is not an owner. */
async function ownedOrg({ db }: Services, ctx: RouteContext<'token'>, name: string): Promise<Org> {
  const org = await findOrg(db, name);
  const role = org && (await roleIn(db, org.id, ctx.state.user));
  if (!org || !role) throw notFound('Organization not found');
  if (role !== 'owner') throw forbidden('Only organization owners may import repositories');
  return org;
}

/** Loads the job of {id}; 404 unless the caller owns its organization (403 for a member who does not). */
async function loadJob(params: { id: number }, ctx: RouteContext<'token'>, services: Services): Promise<ImportJob> {
  const job = await findImportJob(services.db, params.id);
  if (!job) throw notFound('Import not found');
  await ownedOrg(services, ctx, job.target_org).catch((err) => {
    throw err instanceof WharfError && err.code === 'forbidden' ? err : notFound('Import not found');
  });
  return job;
}

// A path that is not a job id goes on to /repos/{org}/{repo}, so an organization named "import" keeps its repositories.
const notAnId = (raw: Record<string, string>) => !/^\d+$/.test(raw.id);

const oneJob = {
  tag: 'imports',
  access: 'token',
  path: '/repos/import/{id}',
  params: JOB_PARAMS,
  notFound: 'Import not found',
  passes: notAnId,
  load: loadJob,
} as const;

/** Repository import jobs (SPEC §8.1): create, list, show, retry, cancel. Organization owners only. */
export const importRoutes: Route[] = [
  route({
    id: 'createImport',
    method: 'post',
    path: '/repos/import',
    summary: 'Start importing a repository into an organization (its owners only)',
    tag: 'imports',
    access: 'token',
    body: NEW_IMPORT,
    answers: { 202: ImportJobSchema },
    errors: [403, 404, 409],
    headers: { 202: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const org = await ownedOrg(services, ctx, body.target_org);
      const job = await createImportJob(services, org, ctx.state.user, body);
      ctx.status = 202;
      ctx.set('Location', `/api/v1/repos/import/${job.id}`);
      ctx.body = presentImportJob(services.config, job);
    },
  }),
  route({
    id: 'listImports',
    method: 'get',
    path: '/repos/import',
    summary: 'Import jobs of the organizations the caller owns, newest first',
    tag: 'imports',
    access: 'token',
    query: ImportListQuery,
    answers: { 200: listOf(ImportJobSchema) },
    errors: [403, 404],
    headers: { 200: ['Link'] },
    handler: async ({ query }, ctx, services) => {
      const org = query.org ? await ownedOrg(services, ctx, query.org) : undefined;
      const found = await listImportJobs(services.db, ctx.state.user, { orgId: org?.id, limit: query.limit, before: query.cursor });
      if (found.length === query.limit) {
        const next = new URLSearchParams({ ...(query.org ? { org: query.org } : {}), limit: String(query.limit), cursor: String(found[found.length - 1].id) });
        ctx.set('Link', `</api/v1/repos/import?${next}>; rel="next"`);
      }
      ctx.body = found.map((job) => presentImportJob(services.config, job));
    },
  }),
  route({
    ...oneJob,
    id: 'getImport',
    method: 'get',
    summary: 'An import job and its progress',
    answers: { 200: ImportJobSchema },
    errors: [403],
    handler: ({ loaded: job }, ctx, { config }) => {
      ctx.body = presentImportJob(config, job);
    },
  }),
  route({
    ...oneJob,
    id: 'retryImport',
    method: 'post',
    path: '/repos/import/{id}/retry',
    summary: 'Start a failed import again with the same settings and its stored credentials',
    answers: { 202: ImportJobSchema },
    errors: [403, 409, 422],
    headers: { 202: ['Location'] },
    handler: async ({ loaded: job }, ctx, services) => {
      const retry = await retryImportJob(services, job, ctx.state.user);
      ctx.status = 202;
      ctx.set('Location', `/api/v1/repos/import/${retry.id}`);
      ctx.body = presentImportJob(services.config, retry);
    },
  }),
  route({
    ...oneJob,
    id: 'cancelImport',
    method: 'delete',
    summary: 'Cancel an import job that has not finished',
    answers: { 200: ImportJobSchema },
    errors: [403, 409],
    handler: async ({ loaded: job }, ctx, services) => {
      if (!(await cancelImportJob(services, job))) throw conflict(`Import ${job.id} has already finished (${job.status})`);
      ctx.body = presentImportJob(services.config, (await findImportJob(services.db, job.id))!);
    },
  }),
];
