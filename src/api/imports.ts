import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import { findOrg, roleIn, type Org } from '../domain/accounts.ts';
import { VISIBILITIES } from '../domain/repos.ts';
import { NAME_PATTERN } from '../domain/names.ts';
import { compile } from '../http/validate.ts';
import { conflict, forbidden, notFound, validationFailed, type ErrorDetail } from '../http/errors.ts';
import { jsonBody } from '../http/body.ts';
import { cancelImportJob, createImportJob, findImportJob, listImportJobs } from '../import/jobs.ts';
import { presentImportJob } from '../import/present.ts';
import { idParam } from './params.ts';

const parseImport = compile({
  type: 'object',
  additionalProperties: false,
  required: ['source_url', 'target_org', 'name'],
  properties: {
    source_url: { type: 'string', minLength: 1, maxLength: 2048 },
    target_org: { type: 'string', pattern: NAME_PATTERN },
    name: { type: 'string', pattern: NAME_PATTERN },
    visibility: { type: 'string', enum: VISIBILITIES, default: 'private' },
    auth_username: { type: 'string', maxLength: 255 },
    auth_password: { type: 'string', maxLength: 4096 },
    lfs_url: { type: 'string', minLength: 1, maxLength: 2048 },
  },
} as const);

/** 404 for an organization the caller is not in (or that does not exist), 403 for a member who is not an owner. */
async function ownedOrg(services: Services, ctx: Context, name: string): Promise<Org> {
  const org = await findOrg(services.db, name);
  const role = org && (await roleIn(services.db, org.id, ctx.state.user));
  if (!org || !role) throw notFound('Organization not found');
  if (role !== 'owner') throw forbidden('Only organization owners may import repositories');
  return org;
}

/** Repository import jobs (SPEC §8.1): create, list, show, cancel. Organization owners only. */
export function importRoutes(router: Router, services: Services) {
  const { db, config, signals } = services;

  const loadJob = async (ctx: Context) => {
    const job = await findImportJob(db, idParam(ctx.params.id, 'Import not found'));
    if (!job) throw notFound('Import not found');
    await ownedOrg(services, ctx, job.target_org).catch((err) => {
      throw err.code === 'forbidden' ? err : notFound('Import not found');
    });
    return job;
  };

  router.post('/repos/import', jsonBody(), async (ctx) => {
    const input = parseImport(ctx.request.body);
    const org = await ownedOrg(services, ctx, input.target_org);
    const job = await createImportJob(db, config, org, ctx.state.user, input);
    signals.emit('imports');
    ctx.status = 202;
    ctx.set('Location', `/api/v1/repos/import/${job.id}`);
    ctx.body = presentImportJob(config, job);
  });

  router.get('/repos/import', async (ctx) => {
    const details: ErrorDetail[] = [];
    const one = (name: string) => {
      const v = ctx.query[name];
      return Array.isArray(v) ? v[v.length - 1] : v;
    };
    const limitText = one('limit') ?? '30';
    const limit = /^\d{1,3}$/.test(limitText) ? Number(limitText) : NaN;
    if (!(limit >= 1 && limit <= 100)) details.push({ path: '/limit', message: 'must be a whole number from 1 to 100' });
    const cursor = one('cursor');
    if (cursor !== undefined && !/^[1-9]\d{0,12}$/.test(cursor)) details.push({ path: '/cursor', message: 'is not a cursor this server gave' });
    if (details.length) throw validationFailed(details);
    const orgName = one('org');
    const org = orgName ? await ownedOrg(services, ctx, orgName) : undefined;
    const found = await listImportJobs(db, ctx.state.user, { orgId: org?.id, limit, before: cursor ? Number(cursor) : undefined });
    if (found.length === limit) {
      const next = new URLSearchParams({ ...(orgName ? { org: orgName } : {}), limit: String(limit), cursor: String(found[found.length - 1].id) });
      ctx.set('Link', `</api/v1/repos/import?${next}>; rel="next"`);
    }
    ctx.body = found.map((job) => presentImportJob(config, job));
  });

  // A path that is not a job id falls through (next) to /repos/:org/:repo, so an
  // organization named "import" keeps its repositories.
  router.get('/repos/import/:id', async (ctx, next) => {
    if (!/^\d+$/.test(ctx.params.id)) return next();
    ctx.body = presentImportJob(config, await loadJob(ctx));
  });

  router.delete('/repos/import/:id', async (ctx, next) => {
    if (!/^\d+$/.test(ctx.params.id)) return next();
    const job = await loadJob(ctx);
    if (!(await cancelImportJob(db, config, job))) throw conflict(`Import ${job.id} has already finished (${job.status})`);
    signals.emit('import-cancel', job.id);
    ctx.body = presentImportJob(config, (await findImportJob(db, job.id))!);
  });
}
