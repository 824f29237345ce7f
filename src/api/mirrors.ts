import { findMirror } from '../pullMirrors/state.ts';
import { queueSync, stopMirroring } from '../pullMirrors/cutover.ts';
import { repositoryById } from '../domain/repos.ts';
import { presentMirror, presentRepository } from './present.ts';
import { route, type Answer, type Route } from './route.ts';
import { MirrorSchema, RepositorySchema } from './schemas.ts';

/** Pull mirrors (SPEC §8.1.1): a sync on request, and the cutover. Owners of the repository's organization (its admins), as on GitHub and Gitea. */
export const mirrorRoutes: Route[] = [
  route({
    id: 'syncMirror',
    method: 'post',
    path: '/repos/{org}/{repo}/mirror/sync',
    summary: 'Queue a sync of a pull mirror (one already queued or running takes the request)',
    tag: 'repositories',
    access: 'repo:admin',
    answers: { 202: MirrorSchema },
    errors: [409],
    handler: async (_input, ctx, services) => {
      const mirror = await queueSync(services, ctx.state.repo);
      ctx.status = 202;
      ctx.body = presentMirror(mirror);
    },
  }),
  route({
    id: 'stopMirroring',
    method: 'delete',
    path: '/repos/{org}/{repo}/mirror',
    summary: 'The cutover: the repository stops being a mirror and takes pushes',
    tag: 'repositories',
    access: 'repo:admin',
    answers: { 200: RepositorySchema },
    errors: [409],
    handler: async (_input, ctx, services) => {
      await stopMirroring(services, ctx.state.repo, ctx.state.user);
      const repo = (await repositoryById(services.db, ctx.state.repo.id)) ?? ctx.state.repo;
      ctx.body = { ...presentRepository(services.config, repo), mirror: presentMirror(await findMirror(services.db, repo.id)) } satisfies Answer<
        typeof RepositorySchema
      >;
    },
  }),
];
