import type { Context, Next } from 'koa';
import type { Db } from '../db/connect.ts';
import type { Access } from '../domain/repos.ts';
import { forbiddenMessage, repositoryFor } from '../domain/access.ts';
import { forbidden, notFound } from './errors.ts';

/**
 * Loads :org/:repo into ctx.state.repo and requires a level of access: 404 when the
 * caller may not see the repository (its existence is never revealed), 403 when they
 * may see it but not do this.
 */
export function repoAccess(db: Db, level: keyof Access) {
  return async function loadRepo(ctx: Context, next: Next) {
    const found = await repositoryFor(db, ctx.params.org, ctx.params.repo, ctx.state.user ?? null, level);
    if (found.refused === 'not_found') throw notFound('Repository not found');
    if (found.refused) throw forbidden(forbiddenMessage(level));
    ctx.state.repo = found.repo;
    ctx.state.access = found.access;
    await next();
  };
}
