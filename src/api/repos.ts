import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { presentRepository } from './present.ts';

/** A single repository: GET /repos/:org/:repo. */
export function repoRoutes(router: Router, { db, config }: Services) {
  router.get('/repos/:org/:repo', repoAccess(db, 'read'), (ctx) => {
    ctx.body = presentRepository(config, ctx.state.repo);
  });
}
