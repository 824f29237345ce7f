import type { Context } from 'koa';
import { parseCookie, stringifySetCookie } from 'cookie';

/** Reads one cookie of the request, or undefined. */
export function readCookie(ctx: Context, name: string): string | undefined {
  return parseCookie(ctx.get('cookie') || '')[name];
}

/**
 * Sets an HttpOnly, SameSite=Strict cookie on the whole site. Written with `cookie` rather
 * than Koa's ctx.cookies, which refuses `Secure` on a plain connection: what a
 * TLS-terminating proxy gives us.
 */
export function setCookie(ctx: Context, name: string, value: string, options: { secure: boolean; maxAgeSeconds?: number }): void {
  ctx.append(
    'Set-Cookie',
    stringifySetCookie({ name, value, path: '/', httpOnly: true, sameSite: 'strict', secure: options.secure, maxAge: options.maxAgeSeconds }),
  );
}

/** Removes a cookie set by setCookie. */
export function clearCookie(ctx: Context, name: string, secure: boolean): void {
  setCookie(ctx, name, '', { secure, maxAgeSeconds: 0 });
}
