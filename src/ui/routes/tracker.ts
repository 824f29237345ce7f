import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { issueRoutes } from './issues.ts';
import { pullRoutes } from './pulls.ts';
import { releaseRoutes } from './releases.ts';
import { pipelineRoutes } from './pipelines.ts';

/** A repository's issues, pull requests, releases and pipelines: the pages its webhook payloads and API answers link to. */
export function trackerRoutes(router: Router, services: Services) {
  issueRoutes(router, services);
  pullRoutes(router, services);
  releaseRoutes(router, services);
  pipelineRoutes(router, services);
}
