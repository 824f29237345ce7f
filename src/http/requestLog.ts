import type { Context, Next } from 'koa';
import type { Logger } from 'pino';

/** One JSON log line per request, with its id; the query string is left out as it may carry credentials. */
export function requestLog(log: Logger) {
  return async function logRequest(ctx: Context, next: Next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      log.info(
        {
          request_id: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          route: ctx._matchedRoute ?? null,
          status: ctx.status,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          user: ctx.state.user?.login,
        },
        'request',
      );
    }
  };
}
