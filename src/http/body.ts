import type { Context, Next } from 'koa';
import getRawBody from 'raw-body';
import { badRequest, payloadTooLarge, unsupportedMediaType } from './errors.ts';

/** Default body limit of every JSON endpoint (SPEC §4). */
export const JSON_LIMIT = 1024 * 1024;

/**
 * Parses a JSON request body into ctx.request.body, refusing bodies over `limit`
 * (413, from Content-Length before reading when declared), non-JSON bodies (415)
 * and malformed JSON (400). An empty body leaves ctx.request.body undefined.
 */
export function jsonBody(limit = JSON_LIMIT) {
  return async function parseJson(ctx: Context, next: Next) {
    const declared = Number(ctx.get('content-length') || 0);
    const hasBody = declared > 0 || ctx.get('transfer-encoding') !== '';
    if (!hasBody) return next();
    if (declared > limit) throw payloadTooLarge(limit);
    if (!ctx.is('application/json', '+json')) throw unsupportedMediaType();
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit, encoding: 'utf8', length: declared || undefined });
    } catch (err: any) {
      if (err?.type === 'entity.too.large') throw payloadTooLarge(limit);
      throw badRequest('Could not read the request body');
    }
    if (text.trim() === '') return next();
    try {
      (ctx.request as any).body = JSON.parse(text);
    } catch {
      throw badRequest('Malformed JSON');
    }
    return next();
  };
}
