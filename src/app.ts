import Koa from 'koa';
import type { Services } from './services.ts';
import type { Mount } from './http/mount.ts';

export type { Mount } from './http/mount.ts';
import { apiRouters } from './api/index.ts';
import { requestId } from './http/requestId.ts';
import { errorRenderer } from './http/onerror.ts';
import { requestLog } from './http/requestLog.ts';
import { refuseBadInput } from './http/inputGuard.ts';
import { rateLimit } from './http/rateLimit.ts';
import { parseGitPath } from './transport/gitPath.ts';
import { httpMetrics } from './http/requestMetrics.ts';
import { closeUnfinished, type BodyDeadlines } from './http/deadlines.ts';

/** Paths the rate limit counts: the API (but its health check) and Git and LFS transport. */
function isLimited(path: string): boolean {
  if (path.startsWith('/api/')) return path !== '/api/v1/health';
  return parseGitPath(path) !== null;
}

/** Builds the Koa application: nosniff, request ids, request logs, the error renderer of HTTP answers (http/onerror.ts; LFS, the web UI and the CLI render their own), the bad-input guard, the rate limit, then every route group. */
export function createApp(services: Services, mounts: Mount[] = []): Koa {
  const app = new Koa({ proxy: false });
  // Errors are rendered by errorRenderer; Koa's own handler would print stacks to stderr.
  app.silent = true;
  app.on('error', (err) => services.log.debug({ err }, 'koa error after response'));
  // Every body reader (JSON, forms, LFS, Git) finds its deadlines here.
  const deadlines: BodyDeadlines = { idleMs: services.config.requestIdleTimeoutMs, totalMs: services.config.requestBodyTimeoutMs };
  app.context.bodyDeadlines = deadlines;
  // SPEC §7.8: no answer (API, UI, Git, LFS, errors) may be sniffed into another type.
  app.use((ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    return next();
  });
  app.use(closeUnfinished);
  app.use(requestId);
  app.use(requestLog(services.log));
  app.use(httpMetrics(services));
  app.use(errorRenderer(services.log));
  app.use(refuseBadInput);
  const limiter = rateLimit(services, isLimited);
  if (limiter) app.use(limiter);
  for (const mount of mounts) mount(app, services);
  // No allowedMethods(): an unsupported method is a 404 like any unknown path, as on GitHub.
  for (const router of apiRouters(services)) app.use(router.routes());
  return app;
}
