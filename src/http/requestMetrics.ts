import type { Context, Next } from 'koa';
import { Counter } from 'prom-client';
import type { Services } from '../services.ts';
import { familyOf } from '../metrics/registry.ts';
import { toHttpError } from './onerror.ts';

declare module 'koa' {
  interface DefaultContext {
    /** The route template @koa/router matched (or metricsMount's '/metrics'): the route label of a request. */
    _matchedRoute?: string | RegExp;
  }
}

/**
 * Counts every request by matched route template (never the raw path, which would make
 * one series per id) and final status, including errors rendered further out.
 */
export function httpMetrics(services: Services) {
  const requests = familyOf(
    services,
    'http',
    (registry) =>
      new Counter({
        name: 'wharf_http_requests_total',
        help: 'HTTP requests served by this process, by route and status.',
        labelNames: ['method', 'route', 'status'],
        registers: [registry],
      }),
  );
  return async function countRequest(ctx: Context, next: Next) {
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      status = toHttpError(err).status;
      throw err;
    } finally {
      const route = ctx._matchedRoute ?? (status === 404 ? 'unmatched' : 'other');
      requests.inc({ method: ctx.method, route: String(route), status: String(status) });
    }
  };
}
