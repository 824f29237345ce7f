import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

/** Gives every request an id (kept from a sane incoming X-Request-Id) and echoes it on the response. */
export async function requestId(ctx: Context, next: Next) {
  const incoming = ctx.get('x-request-id');
  ctx.state.requestId = /^[A-Za-z0-9._-]{1,128}$/.test(incoming) ? incoming : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
}
