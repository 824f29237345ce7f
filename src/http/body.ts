import type { Context, Next } from 'koa';
import { badRequest, payloadTooLarge, unsupportedMediaType } from './errors.ts';
import { readWhole } from './deadlines.ts';
import { refuseBadText } from './inputGuard.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Default body limit of every JSON endpoint (SPEC §4). */
export const JSON_LIMIT = 1024 * 1024;

/**
 * Parses a JSON request body into ctx.request.body, refusing bodies over `limit`
 * (413, from Content-Length before reading when declared), non-JSON bodies (415)
 * malformed JSON or bytes that are not UTF-8 (400), and strings holding a NUL or a lone
 * surrogate (422: Postgres refuses them), and bodies that stall or trickle past their
 * deadlines (408). An empty body leaves ctx.request.body undefined.
 */
export function jsonBody(limit = JSON_LIMIT) {
  return async function parseJson(ctx: Context, next: Next) {
    const declared = Number(ctx.get('content-length') || 0);
    const hasBody = declared > 0 || ctx.get('transfer-encoding') !== '';
    if (!hasBody) return next();
    if (declared > limit) throw payloadTooLarge(limit);
    if (!ctx.is('application/json', '+json')) throw unsupportedMediaType();
    const bytes = await readWhole(ctx, limit);
    let text: string;
    try {
      // Not-UTF-8 bytes would otherwise turn silently into U+FFFD.
      text = utf8.decode(bytes);
    } catch {
      throw badRequest('Request body is not valid UTF-8');
    }
    if (text.trim() === '') return next();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest('Malformed JSON');
    }
    refuseBadText(parsed, text);
    ctx.request.body = parsed;
    return next();
  };
}
