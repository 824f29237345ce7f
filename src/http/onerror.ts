import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { HttpError } from './errors.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { AlreadyExistsError } from '../domain/errors.ts';


/** Maps any thrown error to an HttpError; unknown errors become a bare 500. */
export function toHttpError(err: any): HttpError {
  if (err instanceof HttpError) return err;
  if (isUniqueViolation(err)) return new HttpError(409, 'conflict', 'Already exists');
  if (err instanceof AlreadyExistsError) return new HttpError(409, 'conflict', err.message);
  // Koa and its body parser throw http-errors with `expose` for client faults.
  if (err?.expose && typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
    if (err.status === 413) return new HttpError(413, 'payload_too_large', 'Request body is over its limit');
    if (err.status === 415) return new HttpError(415, 'unsupported_media_type', 'Request body must be application/json');
    return new HttpError(400, 'bad_request', String(err.message));
  }
  return new HttpError(500, 'internal', 'Internal error');
}

/** Renders every error as SPEC §4 JSON with the request id; logs 5xx with the stack. */
export function errorRenderer(log: Logger) {
  return async function onerror(ctx: Context, next: Next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null && ctx.respond !== false) throw new HttpError(404, 'not_found', 'Not found');
    } catch (err: any) {
      const httpError = toHttpError(err);
      if (httpError.status >= 500) log.error({ err, request_id: ctx.state.requestId }, 'request failed');
      ctx.status = httpError.status;
      for (const [name, value] of Object.entries(httpError.headers)) ctx.set(name, value);
      ctx.type = 'application/json';
      ctx.body = {
        error: { code: httpError.code, message: httpError.message, details: httpError.details },
        request_id: ctx.state.requestId,
      };
    }
  };
}
