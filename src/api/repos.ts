import { presentMirror, presentRepository } from './present.ts';
import { deleteRepository } from '../domain/repos.ts';
import { findMirror } from '../pullMirrors/state.ts';
import { route, type Answer, type Route } from './route.ts';
import { RepositorySchema } from './schemas.ts';

/** A single repository: GET and DELETE /repos/{org}/{repo}. */
export const repoRoutes: Route[] = [
  route({
    id: 'getRepository',
    method: 'get',
    path: '/repos/{org}/{repo}',
    summary: 'A repository',
    tag: 'repositories',
    access: 'repo:read',
    answers: { 200: RepositorySchema },
    handler: async (_input, ctx, { config, db }) => {
      ctx.body = { ...presentRepository(config, ctx.state.repo), mirror: presentMirror(await findMirror(db, ctx.state.repo.id)) } satisfies Answer<
        typeof RepositorySchema
      >;
    },
  }),
  route({
    id: 'deleteRepository',
    method: 'delete',
    path: '/repos/{org}/{repo}',
    summary: 'Delete a repository, its webhooks and their pending deliveries (raises `repository` deleted at organization webhooks)',
    tag: 'repositories',
    access: 'repo:admin',
    answers: { 204: null },
    handler: async (_input, ctx, services) => {
      await deleteRepository(services, ctx.state.repo, ctx.state.user);
      ctx.status = 204;
    },
  }),
];
