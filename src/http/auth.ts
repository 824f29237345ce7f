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

/** Requires a valid bearer token (401 otherwise) and puts its user in ctx.state.user. */
export function requireUser(db: Db) {
  return async function authenticate(ctx: Context, next: Next) {
    const token = bearerToken(ctx);
    if (!token) throw unauthorized('Authorization: Bearer <token> is required');
    const user = await userForToken(db, token);
    if (!user) throw unauthorized('The token is unknown, expired or revoked');
    ctx.state.user = user satisfies User;
    await next();
  };
}
