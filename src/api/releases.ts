import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { createRelease, findRelease, type Release } from '../domain/releases.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { jsonBody } from '../http/body.ts';
import { notFound } from '../http/errors.ts';
import { intParam, text } from './fields.ts';
import { iso } from './present.ts';

const parseNewRelease = compile({
  type: 'object',
  additionalProperties: false,
  required: ['tag_name'],
  properties: {
    // git's own rules are checked too; this keeps out what could never be a tag.
    tag_name: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^-\\s\\u0000][^\\u0000]*$' },
    name: text(0, 255),
    body: text(0, 262144),
    draft: { type: 'boolean' },
    prerelease: { type: 'boolean' },
    target_commitish: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^-\\s\\u0000][^\\u0000]*$' },
  },
} as const);

/** The API form of a release. */
function presentRelease(r: Release) {
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
export function releaseRoutes(router: Router, services: Services) {
  const { db } = services;

  router.post('/repos/:org/:repo/releases', repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const input = parseNewRelease(ctx.request.body);
    const release = await createRelease(services, ctx.state.repo, ctx.state.user, input);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/releases/${release.id}`);
    ctx.body = presentRelease(release);
  });

  router.get('/repos/:org/:repo/releases/:id', repoAccess(db, 'read'), async (ctx) => {
    const release = await findRelease(db, ctx.state.repo, intParam(ctx.params.id, 'Release not found'));
    if (!release) throw notFound('Release not found');
    ctx.body = presentRelease(release);
  });
}
