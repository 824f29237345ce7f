import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { classify, type Classified } from './classify.ts';
import { notFound } from '../errors/wharfError.ts';

/** What classify() makes of an error (kept under its old name for the metrics route). */
export function toHttpError(err: unknown): Classified {
  return classify(err);
}

/** Renders every error as SPEC §4 JSON with the request id; logs 5xx with the stack. */
export function errorRenderer(log: Logger) {
  return async function onerror(ctx: Context, next: Next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) throw notFound();
    } catch (err) {
      const e = classify(err);
      if (e.status >= 500) log.error({ err, request_id: ctx.state.requestId }, 'request failed');
      ctx.status = e.status;
      for (const [name, value] of Object.entries(e.headers)) ctx.set(name, value);
      ctx.type = 'application/json';
      ctx.body = { error: { code: e.code, message: e.message, details: e.details }, request_id: ctx.state.requestId };
    }
  };
}
