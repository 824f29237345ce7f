import { createRelease, findRelease, type Release } from '../domain/releases.ts';
import { notFound } from '../http/errors.ts';
import { NEW_RELEASE } from '../domain/inputs/releases.ts';
import { iso } from './present.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, repoParams, TEXT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';

const ReleaseSchema = named('Release', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'tag_name', 'name', 'body', 'draft', 'prerelease', 'target_commitish', 'author', 'created_at', 'published_at'],
  properties: {
    id: ID,
    tag_name: { type: 'string' },
    name: { type: 'string' },
    body: { type: 'string' },
    draft: { type: 'boolean' },
    prerelease: { type: 'boolean' },
    target_commitish: { type: 'string' },
    author: TEXT_OR_NULL,
    created_at: TIME,
    published_at: TIME_OR_NULL,
  },
} as const);

/** The API form of a release. */
function presentRelease(r: Release): Answer<typeof ReleaseSchema> {
  return {
    id: r.id,
    tag_name: r.tag_name,
    name: r.name,
    body: r.body,
    draft: r.draft,
    prerelease: r.prerelease,
    target_commitish: r.target_commitish,
    author: r.author,
    created_at: iso(r.created_at),
    published_at: iso(r.published_at),
  };
}

/** Releases (SPEC §6 producer of `release`). */
export const releaseRoutes: Route[] = [
  route({
    id: 'createRelease',
    method: 'post',
    path: '/repos/{org}/{repo}/releases',
    summary: 'Create a release, and its tag when it does not exist',
    tag: 'releases',
    access: 'repo:write',
    body: NEW_RELEASE,
    answers: { 201: ReleaseSchema },
    errors: [409],
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const release = await createRelease(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/releases/${release.id}`);
      ctx.body = presentRelease(release);
    },
  }),
  route({
    id: 'getRelease',
    method: 'get',
    path: '/repos/{org}/{repo}/releases/{id}',
    summary: 'A release',
    tag: 'releases',
    access: 'repo:read',
    params: repoParams('id'),
    notFound: 'Release not found',
    answers: { 200: ReleaseSchema },
    handler: async ({ params }, ctx, { db }) => {
      const release = await findRelease(db, ctx.state.repo, params.id);
      if (!release) throw notFound('Release not found');
      ctx.body = presentRelease(release);
    },
  }),
];
