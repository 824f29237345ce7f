import type { Context } from 'koa';

/** Reads one cookie of the request, or undefined. */
export function readCookie(ctx: Context, name: string): string | undefined {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Sets an HttpOnly, SameSite=Strict cookie on the whole site. Written by hand because
 * Koa refuses `Secure` on a plain connection, which is what a TLS-terminating proxy gives us.
 */
export function setCookie(ctx: Context, name: string, value: string, options: { secure: boolean; maxAgeSeconds?: number }): void {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (options.secure) parts.push('Secure');
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  ctx.append('Set-Cookie', parts.join('; '));
}

/** Removes a cookie set by setCookie. */
export function clearCookie(ctx: Context, name: string, secure: boolean): void {
  setCookie(ctx, name, '', { secure, maxAgeSeconds: 0 });
}
