import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { tokenRoutes } from './tokens.ts';
import { memberRoutes } from './members.ts';
import { createRoutes } from './create.ts';

/** Accounts in the web UI: one's tokens, an organization's members, New repository and New organization (all under /-/). */
export function accountRoutes(router: Router, services: Services) {
  tokenRoutes(router, services);
  memberRoutes(router, services);
  createRoutes(router, services);
}
