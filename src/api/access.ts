import type { Context, Middleware, Next } from 'koa';
import type { Db } from '../db/connect.ts';
import { findOrg, orgById, roleIn } from '../domain/accounts.ts';
import { repositoryById } from '../domain/repos.ts';
import { accessTo } from '../domain/access.ts';
import { findWebhook } from '../webhooks/store.ts';
import { requireUser } from '../http/auth.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { forbidden, notFound } from '../http/errors.ts';
import { idParam } from './params.ts';
import type { Access } from './context.ts';

/**
 * Loads :id as ctx.state.webhook with its repository (or, for an organization webhook,
 * its organization); the caller must own the organization (404 when they cannot see the
 * repository or are not in the organization, so a private repository's hooks are never
 * revealed; 403 for a member).
 */
function webhookAccess(db: Db): Middleware {
  return async function loadWebhook(ctx: Context, next: Next) {
    const id = idParam(ctx.params.id, 'Webhook not found');
    const hook = await findWebhook(db, id);
    if (hook && hook.org_id !== null) {
      const org = await orgById(db, hook.org_id);
      const role = org && (await roleIn(db, org.id, ctx.state.user ?? null));
      if (!org || !role) throw notFound('Webhook not found');
      if (role !== 'owner') throw forbidden('Only organization owners may manage webhooks');
      ctx.state.webhook = hook;
      ctx.state.org = org;
      await next();
      return;
    }
    const repo = hook && hook.repository_id !== null ? await repositoryById(db, hook.repository_id) : undefined;
    if (!hook || !repo) throw notFound('Webhook not found');
    const access = await accessTo(db, repo, ctx.state.user ?? null);
    if (!access.read) throw notFound('Webhook not found');
    if (!access.admin) throw forbidden('Only organization owners may manage webhooks');
    ctx.state.webhook = hook;
    ctx.state.repo = repo;
    await next();
  };
}

/** Loads :org as ctx.state.org; 404 unless it exists (and, from `member` on, unless the caller is in it), 403 for a member where owners are needed. */
function orgAccess(db: Db, level: 'read' | 'member' | 'owner', denied: string): Middleware {
  return async function loadOrg(ctx: Context, next: Next) {
    const org = await findOrg(db, ctx.params.org);
    const role = org && level !== 'read' ? await roleIn(db, org.id, ctx.state.user ?? null) : 'member';
    if (!org || !role) throw notFound('Organization not found');
    if (level === 'owner' && role !== 'owner') throw forbidden(denied);
    ctx.state.org = org;
    await next();
  };
}

/** Refuses anyone but a site administrator. */
function siteAdmin(denied: string): Middleware {
  return async function requireAdmin(ctx: Context, next: Next) {
    if (!ctx.state.user?.is_admin) throw forbidden(denied);
    await next();
  };
}

/**
 * The middlewares of an access rule, in two parts run around the JSON body reader as the
 * routes always have: repository and webhook rules before the body is read, organization
 * and site rules after it (so a bad body is a 400 whoever sends it).
 */
export function accessMiddlewares(db: Db, access: Access, denied = 'This token may not do that'): { before: Middleware[]; after: Middleware[] } {
  if (access === 'public') return { before: [], after: [] };
  const user = requireUser(db);
  switch (access) {
    case 'token':
      return { before: [user], after: [] };
    case 'repo:read':
      return { before: [user, repoAccess(db, 'read')], after: [] };
    case 'repo:write':
      return { before: [user, repoAccess(db, 'write')], after: [] };
    case 'repo:admin':
      return { before: [user, repoAccess(db, 'admin')], after: [] };
    case 'webhook:admin':
      return { before: [user, webhookAccess(db)], after: [] };
    case 'org:read':
      return { before: [user], after: [orgAccess(db, 'read', denied)] };
    case 'org:member':
      return { before: [user], after: [orgAccess(db, 'member', denied)] };
    case 'org:owner':
      return { before: [user], after: [orgAccess(db, 'owner', denied)] };
    case 'site:admin':
      return { before: [user], after: [siteAdmin(denied)] };
  }
}

/** The error statuses an access rule can answer with. */
export function accessErrors(access: Access): number[] {
  if (access === 'public') return [];
  if (access === 'token') return [401];
  if (access === 'site:admin') return [401, 403];
  if (access === 'repo:read' || access === 'org:read' || access === 'org:member') return [401, 404];
  return [401, 403, 404];
}
