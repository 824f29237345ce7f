import type { RouteContext } from './context.ts';
import type { Services } from '../services.ts';
import { notFound } from '../http/errors.ts';
import { NEW_PUSH_MIRROR, formatInterval } from '../pushMirrors/input.ts';
import { createPushMirror, deletePushMirror, findPushMirror, listPushMirrors, requestSync, type PushMirror } from '../pushMirrors/store.ts';
import { iso } from './present.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, listOf, repoParams, TEXT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';

/** The API form of a push mirror (SPEC §8.1.2): never its credentials. */
const PushMirrorSchema = named('PushMirror', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'sync_on_push', 'interval', 'created_at', 'last_sync_at', 'last_sync_status', 'last_error', 'next_sync_at', 'has_credentials'],
  properties: {
    id: ID,
    url: { type: 'string', description: 'The remote, without credentials.' },
    sync_on_push: { type: 'boolean' },
    interval: { type: 'string', description: 'A duration such as 8h.' },
    created_at: TIME,
    last_sync_at: { ...TIME_OR_NULL, description: 'When the last finished sync started; null before the first.' },
    last_sync_status: { enum: ['succeeded', 'failed', null] },
    last_error: TEXT_OR_NULL,
    next_sync_at: { ...TIME_OR_NULL, description: 'When the next sync is due; null while parked (after repeated node deaths: ask for a sync).' },
    has_credentials: { type: 'boolean' },
  },
} as const);

/** The API form of a push mirror. */
function present(mirror: PushMirror): Answer<typeof PushMirrorSchema> {
  return {
    id: mirror.id,
    url: mirror.url,
    sync_on_push: mirror.sync_on_push,
    interval: formatInterval(mirror.interval_ms),
    created_at: iso(mirror.created_at),
    last_sync_at: iso(mirror.last_sync_at),
    last_sync_status: mirror.last_sync_status,
    last_error: mirror.last_error,
    next_sync_at: mirror.parked_at === null ? iso(mirror.next_sync_at) : null,
    has_credentials: mirror.credentials !== null,
  };
}

/** Loads the push mirror of {id} in the repository loaded by the access rule, or 404. */
async function mirrorOfRepo(params: { id: number }, ctx: RouteContext<'repo:admin'>, { db }: Services): Promise<PushMirror> {
  const mirror = await findPushMirror(db, params.id);
  if (!mirror || mirror.repository_id !== ctx.state.repo.id) throw notFound('Push mirror not found');
  return mirror;
}

const base = { tag: 'push-mirrors', access: 'repo:admin' } as const;
const one = {
  ...base,
  path: '/repos/{org}/{repo}/push-mirrors/{id}',
  params: repoParams('id'),
  notFound: 'Push mirror not found',
  load: mirrorOfRepo,
} as const;

/** Push mirrors under /repos/{org}/{repo}/push-mirrors, for organization owners (SPEC §8.1.2). */
export const pushMirrorRoutes: Route[] = [
  route({
    ...base,
    id: 'createPushMirror',
    method: 'post',
    path: '/repos/{org}/{repo}/push-mirrors',
    summary: 'Add a push mirror (its first sync starts at once)',
    body: NEW_PUSH_MIRROR,
    answers: { 201: PushMirrorSchema },
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const mirror = await createPushMirror(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/push-mirrors/${mirror.id}`);
      ctx.body = present(mirror);
    },
  }),
  route({
    ...base,
    id: 'listPushMirrors',
    method: 'get',
    path: '/repos/{org}/{repo}/push-mirrors',
    summary: 'The push mirrors of a repository',
    answers: { 200: listOf(PushMirrorSchema) },
    handler: async (_input, ctx, { db }) => {
      ctx.body = (await listPushMirrors(db, ctx.state.repo.id)).map(present);
    },
  }),
  route({
    ...one,
    id: 'getPushMirror',
    method: 'get',
    summary: 'A push mirror',
    answers: { 200: PushMirrorSchema },
    handler: ({ loaded }, ctx) => {
      ctx.body = present(loaded);
    },
  }),
  route({
    ...one,
    id: 'deletePushMirror',
    method: 'delete',
    summary: 'Remove a push mirror (a sync in flight is stopped)',
    answers: { 204: null },
    handler: async ({ loaded }, ctx, { db }) => {
      await deletePushMirror(db, loaded.id);
      ctx.status = 204;
    },
  }),
  route({
    ...one,
    id: 'syncPushMirror',
    method: 'post',
    path: '/repos/{org}/{repo}/push-mirrors/{id}/sync',
    summary: 'Sync a push mirror now (also takes up a parked one again)',
    answers: { 202: PushMirrorSchema },
    handler: async ({ loaded }, ctx, services) => {
      await requestSync(services, loaded.id);
      ctx.status = 202;
      ctx.body = present((await findPushMirror(services.db, loaded.id)) ?? loaded);
    },
  }),
];
