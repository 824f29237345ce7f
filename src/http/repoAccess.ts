import type { Context, Next } from 'koa';
import type { Db } from '../db/connect.ts';
import { accessTo, findRepository, type Access } from '../domain/repos.ts';
import { forbidden, notFound } from './errors.ts';

/**
 * Loads :org/:repo into ctx.state.repo and requires a level of access: 404 when the
 * caller may not see the repository (its existence is never revealed), 403 when they
 * may see it but not do this.
 */
export function repoAccess(db: Db, level: keyof Access) {
  return async function loadRepo(ctx: Context, next: Next) {
    const repo = await findRepository(db, ctx.params.org, ctx.params.repo);
    if (!repo) throw notFound('Repository not found');
    const access = await accessTo(db, repo, ctx.state.user ?? null);
    if (!access.read) throw notFound('Repository not found');
    if (!access[level]) throw forbidden(level === 'admin' ? 'Only organization owners may do this' : 'Only organization members may do this');
    ctx.state.repo = repo;
    ctx.state.access = access;
    await next();
  };
}
