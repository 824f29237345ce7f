import Router from '@koa/router';
import type { Services } from '../services.ts';
import type { Route } from './route.ts';
import { mountRoutes } from './mount.ts';
import { livenessRoutes } from './liveness.ts';
import { userRoutes } from './user.ts';
import { orgRoutes } from './orgs.ts';
import { memberRoutes } from './members.ts';
import { repoRoutes } from './repos.ts';
import { mirrorRoutes } from './mirrors.ts';
import { pushRecordRoutes } from './pushRecords.ts';
import { bulkIssueRoutes } from './bulkIssues.ts';
import { importRoutes } from './imports.ts';
import { webhookRoutes } from './webhooks.ts';
import { orgWebhookRoutes } from './orgWebhooks.ts';
import { pushMirrorRoutes } from './pushMirrors.ts';
import { deliveryRoutes } from './deliveries.ts';
import { issueRoutes } from './issues.ts';
import { commentRoutes } from './comments.ts';
import { pipelineRoutes } from './pipelines.ts';
import { agentActionRoutes } from './agentActions.ts';
import { pullRoutes } from './pulls.ts';
import { releaseRoutes } from './releases.ts';
import { openApiRoute } from './openapi.ts';

/** Every route group, in the order they are matched (imports before /repos/{org}/{repo}, whose path they share). */
const GROUPS: Route[][] = [
  livenessRoutes,
  [openApiRoute(() => API_ROUTES)],
  userRoutes,
  orgRoutes,
  memberRoutes,
  importRoutes,
  repoRoutes,
  mirrorRoutes,
  pushRecordRoutes,
  bulkIssueRoutes,
  issueRoutes,
  commentRoutes,
  pullRoutes,
  releaseRoutes,
  pipelineRoutes,
  agentActionRoutes,
  webhookRoutes,
  orgWebhookRoutes,
  pushMirrorRoutes,
  deliveryRoutes,
];

/** The registry: every /api/v1 route, declared once. */
export const API_ROUTES: readonly Route[] = GROUPS.flat();

/** The REST API under /api/v1, mounted from the registry. */
export function apiRouters(services: Services): Router[] {
  const router = new Router({ prefix: '/api/v1' });
  mountRoutes(router, services, API_ROUTES);
  return [router];
}
