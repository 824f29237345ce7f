import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { readCookie, setCookie } from './cookies.ts';

/** Cookie that gives a signed-out browser a CSRF seed of its own (for the sign-in form). */
export const ANON_COOKIE = 'wharf_anon';

/** The CSRF token forms carry: an HMAC of the browser's secret seed, so it cannot be guessed or set cross-site. */
export function csrfToken(seed: string): string {
  return createHmac('sha256', seed).update('wharf csrf v1').digest('base64url');
}

/** True when a submitted CSRF token belongs to this seed; compared in constant time. */
export function csrfMatches(seed: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length === 0) return false;
  const expected = Buffer.from(csrfToken(seed));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The CSRF seed of a signed-out browser, from its anonymous cookie; a new cookie is
 * set when missing, unless `create` is false (a POST must not mint the seed it is checked against).
 */
export function anonymousSeed(ctx: Context, secure: boolean, create = true): string | undefined {
  const existing = readCookie(ctx, ANON_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  if (!create) return undefined;
  const seed = randomBytes(32).toString('base64url');
  setCookie(ctx, ANON_COOKIE, seed, { secure });
  return seed;
}
