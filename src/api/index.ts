import Router from '@koa/router';
import type { Services } from '../services.ts';
import { requireUser } from '../http/auth.ts';
import { healthRoutes } from './health.ts';
import { userRoutes } from './user.ts';
import { orgRoutes } from './orgs.ts';
import { repoRoutes } from './repos.ts';
import { bulkIssueRoutes } from './bulkIssues.ts';
import { importRoutes } from './imports.ts';
import { webhookRoutes } from './webhooks.ts';
import { deliveryRoutes } from './deliveries.ts';
import { issueRoutes } from './issues.ts';
import { commentRoutes } from './comments.ts';
import { pipelineRoutes } from './pipelines.ts';
import { agentActionRoutes } from './agentActions.ts';
import { pullRoutes } from './pulls.ts';
import { releaseRoutes } from './releases.ts';

/** A group of API routes; each adds its routes to the router it is given. */
export type RouteGroup = (router: Router, services: Services) => void;

/** Route groups behind a bearer token. */
const AUTHENTICATED: RouteGroup[] = [userRoutes, orgRoutes, importRoutes, repoRoutes, bulkIssueRoutes, issueRoutes, commentRoutes, pullRoutes, releaseRoutes, pipelineRoutes, agentActionRoutes, webhookRoutes, deliveryRoutes];

/** The REST API under /api/v1: health and meta open, everything else behind a bearer token. */
export function apiRouters(services: Services): Router[] {
  const open = new Router({ prefix: '/api/v1' });
  healthRoutes(open, services);
  const authed = new Router({ prefix: '/api/v1' });
  // Router middleware runs only for paths that match a route, so unknown paths stay 404.
  authed.use(requireUser(services.db));
  for (const group of AUTHENTICATED) group(authed, services);
  return [open, authed];
}
