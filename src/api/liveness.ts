import fs from 'node:fs/promises';
import { constants } from 'node:fs';
import type { Services } from '../services.ts';
import { version } from '../version.ts';
import { route, type Answer, type Route } from './route.ts';

const HealthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'database', 'repos_dir', 'lfs_store'],
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    database: { type: 'string', enum: ['ok', 'unreachable'] },
    repos_dir: { type: 'string', enum: ['ok', 'not writable'] },
    lfs_store: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'status'],
      description:
        'Where LFS objects are kept (LFS_STORE) and whether it answers now: the directory is writable, or the bucket answers a HEAD within 2 s. Informative: an unreachable store does not make the node unavailable (every node shares it).',
      properties: {
        kind: { type: 'string', enum: ['fs', 's3'] },
        status: { type: 'string', enum: ['ok', 'unreachable'] },
      },
    },
  },
} as const;

const MetaSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['hooks', 'version'],
  properties: {
    hooks: { type: 'array', items: { type: 'string' }, description: 'Address ranges deliveries come from (DELIVERY_SOURCE_RANGES).' },
    version: { type: 'string' },
  },
} as const;

/** Whether the database answers, the repository directory is writable and the LFS store answers. */
async function runChecks({ db, config, lfs }: Services): Promise<Omit<Answer<typeof HealthSchema>, 'status'>> {
  const store = lfs.health();
  const checks: Omit<Answer<typeof HealthSchema>, 'status'> = { database: 'ok', repos_dir: 'ok', lfs_store: { kind: 'fs', status: 'ok' } };
  try {
    await db.raw('select 1');
  } catch {
    checks.database = 'unreachable';
  }
  try {
    await fs.mkdir(config.reposDir, { recursive: true });
    await fs.access(config.reposDir, constants.W_OK);
  } catch {
    checks.repos_dir = 'not writable';
  }
  checks.lfs_store = await store;
  return checks;
}

/** GET /health and GET /meta: the endpoints that need no token. */
export const livenessRoutes: Route[] = [
  route({
    id: 'getHealth',
    method: 'get',
    path: '/health',
    summary: 'Whether the database and the repository directory work, and the LFS store answers (not rate limited)',
    tag: 'meta',
    access: 'public',
    answers: { 200: HealthSchema, 503: HealthSchema },
    handler: async (_input, ctx, services) => {
      const checks = await runChecks(services);
      const ok = checks.database === 'ok' && checks.repos_dir === 'ok';
      ctx.status = ok ? 200 : 503;
      ctx.body = { status: ok ? 'ok' : 'unavailable', ...checks } satisfies Answer<typeof HealthSchema>;
    },
  }),
  route({
    id: 'getMeta',
    method: 'get',
    path: '/meta',
    summary: 'The delivery source ranges and the server version',
    tag: 'meta',
    access: 'public',
    answers: { 200: MetaSchema },
    handler: (_input, ctx, { config }) => {
      ctx.body = { hooks: config.deliverySourceRanges, version } satisfies Answer<typeof MetaSchema>;
    },
  }),
];
