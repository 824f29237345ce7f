import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { findOrg, roleIn, type Org, type User } from '../../domain/accounts.ts';
import { findRepository, type Repository } from '../../domain/repos.ts';
import { accessRule } from '../../domain/access.ts';
import { isValidName } from '../../domain/names.ts';
import { requestToken, tokenUser } from '../../http/auth.ts';
import { forbidden, notFound, unauthorized } from '../../errors/wharfError.ts';

/** The challenge git answers by sending credentials (it sends none before it). */
export const GIT_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="Wharf"' };

/** The caller of a Git or LFS request: null when anonymous; a 401 when credentials are present but bad. */
export async function gitCaller(services: Services, ctx: Context, challenge: Record<string, string>): Promise<User | null> {
  const header = ctx.get('authorization');
  if (!header) return null;
  const token = requestToken(header);
  const user = token ? await tokenUser(ctx, services.db, token) : null;
  if (!user) throw unauthorized('Bad credentials: use an access token as the password', challenge);
  ctx.state.user = user;
  return user;
}

/** A push to a repository that does not exist yet, which the pusher, a member of its organization, may create (push to create). */
export interface FirstPush {
  org: Org;
  name: string;
  user: User;
}

/**
 * Finds the repository of a Git or LFS request and checks the caller may read it or
 * push to it (SPEC §3): 401 without credentials unless it is a public read, 404 when the
 * caller may not see it, 403 when they may see it but not push. With `create`, a push by
 * an organization member to a missing repository is allowed to create it: the answer is
 * then a FirstPush, which the push path creates (createOnFirstPush, src/domain/firstPush.ts).
 */
export async function authorizeRepo(
  services: Services,
  ctx: Context,
  target: { org: string; name: string },
  level: 'read' | 'write',
  options?: { challenge?: Record<string, string> },
): Promise<Repository>;
export async function authorizeRepo(
  services: Services,
  ctx: Context,
  target: { org: string; name: string },
  level: 'read' | 'write',
  options: { create: boolean; challenge?: Record<string, string> },
): Promise<Repository | FirstPush>;
export async function authorizeRepo(
  services: Services,
  ctx: Context,
  target: { org: string; name: string },
  level: 'read' | 'write',
  options: { create?: boolean; challenge?: Record<string, string> } = {},
): Promise<Repository | FirstPush> {
  const challenge = options.challenge ?? GIT_CHALLENGE;
  const user = await gitCaller(services, ctx, challenge);
  const needLogin = () => unauthorized('Authentication required', challenge);
  const repo = await findRepository(services.db, target.org, target.name);
  if (!repo) {
    if (!user) throw needLogin();
    const firstPush = level === 'write' && options.create ? await mayCreateOnPush(services, user, target) : undefined;
    if (!firstPush) throw notFound('Repository not found');
    return firstPush;
  }
  const access = accessRule(repo, user, await roleIn(services.db, repo.org_id, user));
  if (!access.read) {
    if (!user) throw needLogin();
    throw notFound('Repository not found');
  }
  if (level === 'write' && !access.write) {
    if (!user) throw needLogin();
    throw forbidden('Only organization members may push');
  }
  return repo;
}

/** Push to create: a member of the organization may create a repository of a valid name (private) by pushing to it. */
async function mayCreateOnPush(services: Services, user: User, target: { org: string; name: string }): Promise<FirstPush | undefined> {
  if (!isValidName(target.name)) return undefined;
  const org = await findOrg(services.db, target.org);
  if (!org || !(await roleIn(services.db, org.id, user))) return undefined;
  return { org, name: target.name, user };
}
