import type { Db } from '../db/connect.ts';
import { findOrg, roleIn, type Org, type Role, type User } from './accounts.ts';
import { findRepository, type Access, type Repository } from './repos.ts';

/** A level of access an operation needs on a repository. */
export type AccessLevel = keyof Access;

/** Why an operation is refused: `not_found` hides what the caller may not see; `forbidden` when they see it but may not do this. */
export type Refusal = 'not_found' | 'forbidden';

/**
 * The access rules of SPEC §3, pure: members read and write, owners (site admins count as
 * owners everywhere, through `role`) also administer; everyone reads public repositories,
 * any signed-in user reads internal ones.
 */
export function accessRule(repo: Pick<Repository, 'visibility'>, user: User | null, role: Role | null): Access {
  const read = role !== null || repo.visibility === 'public' || (repo.visibility === 'internal' && user !== null);
  return { read, write: role !== null, admin: role === 'owner' };
}

/** What `user` (null: anonymous) may do with `repo`, by their role in its organization. */
export async function accessTo(db: Db, repo: Repository, user: User | null): Promise<Access> {
  return accessRule(repo, user, await roleIn(db, repo.org_id, user));
}

/** The refusal `access` meets for `level`, or null when allowed: a repository one may not read is never revealed. */
export function refusalOf(access: Access, level: AccessLevel): Refusal | null {
  if (!access.read) return 'not_found';
  return access[level] ? null : 'forbidden';
}

/** What a refused level is told (the same words on every surface). */
export function forbiddenMessage(level: AccessLevel): string {
  return level === 'admin' ? 'Only organization owners may do this' : 'Only organization members may do this';
}

/** A repository and what the user may do with it, or why the user may not have it at `level`. */
export type RepositoryAccess = { repo: Repository; access: Access; refused?: undefined } | { refused: Refusal };

/** Loads `org/name` for `user` (null: anonymous) and checks the level of access it needs. */
export async function repositoryFor(db: Db, org: string, name: string, user: User | null, level: AccessLevel): Promise<RepositoryAccess> {
  const repo = await findRepository(db, org, name);
  if (!repo) return { refused: 'not_found' };
  const access = accessRule(repo, user, await roleIn(db, repo.org_id, user));
  const refused = refusalOf(access, level);
  return refused ? { refused } : { repo, access };
}

/** An organization the user owns, or why not: `not_found` when it is missing or they are not in it, `forbidden` for a member. */
export async function ownedOrg(db: Db, name: string, user: User): Promise<{ org: Org; refused?: undefined } | { refused: Refusal }> {
  const org = await findOrg(db, name);
  const role = org && (await roleIn(db, org.id, user));
  if (!org || !role) return { refused: 'not_found' };
  return role === 'owner' ? { org } : { refused: 'forbidden' };
}
