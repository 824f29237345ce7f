import { presentMirror, presentRepository } from './present.ts';
import { findMirror } from '../mirrors/state.ts';
import { route, type Route } from './route.ts';
import { RepositorySchema } from './schemas.ts';

/** A single repository: GET /repos/{org}/{repo}. */
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
      ctx.body = { ...presentRepository(config, ctx.state.repo), mirror: presentMirror(await findMirror(db, ctx.state.repo.id)) };
    },
  }),
];
