import type { Context } from 'koa';
import type { User } from '../domain/accounts.ts';
import type { Refusal } from '../domain/access.ts';
import { ui } from './context.ts';
import { PageError, SignInRequired } from './errors.ts';

/** The signed-in user, or SignInRequired (the browser is sent to sign in and back). */
export function requireUser(ctx: Context): User {
  const user = ui(ctx).user;
  if (!user) throw new SignInRequired('sign in first');
  return user;
}

/** The page of a refused operation: a 404 that reveals nothing, or a 403 saying who may. */
export function refusedPage(refused: Refusal, notFoundText: string, forbiddenText: string): PageError {
  return refused === 'not_found' ? new PageError(404, 'Not found', notFoundText) : new PageError(403, 'Not allowed', forbiddenText);
}
