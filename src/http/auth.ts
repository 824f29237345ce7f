import type { Context, Next } from 'koa';
import { userForToken } from '../domain/tokens.ts';
import type { User } from '../domain/accounts.ts';
import type { Db } from '../db/connect.ts';
import { unauthorized } from './errors.ts';

/** The bearer token of a request, or undefined. */
export function bearerToken(ctx: Context): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return m?.[1];
}

const lookedUp = new WeakMap<Context, { token: string; user: User | null }>();

/** The user of a token, looked up once per request: the rate limit looks first, the route reuses its answer. */
export async function tokenUser(ctx: Context, db: Db, token: string): Promise<User | null> {
  const seen = lookedUp.get(ctx);
  if (seen && seen.token === token) return seen.user;
  const user = await userForToken(db, token);
  lookedUp.set(ctx, { token, user });
  return user;
}

/** Requires a valid bearer token (401 otherwise) and puts its user in ctx.state.user. */
export function requireUser(db: Db) {
  return async function authenticate(ctx: Context, next: Next) {
    const token = bearerToken(ctx);
    if (!token) throw unauthorized('Authorization: Bearer <token> is required');
    const user = await tokenUser(ctx, db, token);
    if (!user) throw unauthorized('The token is unknown, expired or revoked');
    ctx.state.user = user satisfies User;
    await next();
  };
}

/** The token of a request: the password of HTTP Basic (any user name; the user name when the password is empty), or a bearer token. */
export function requestToken(authorization: string): string | undefined {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    // Some clients put the token in the user name and leave the password empty.
    return decoded.slice(colon + 1) || decoded.slice(0, colon);
  }
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
}
