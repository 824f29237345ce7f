import type { Context } from 'koa';
import type { Services } from '../services.ts';
import type { Config } from '../config.ts';
import { findOrg } from '../domain/accounts.ts';
import { forbiddenMessage, repositoryFor, type AccessLevel } from '../domain/access.ts';
import { listRepositories, type Access, type Repository } from '../domain/repos.ts';
import { ui } from './context.ts';
import { PageError } from './errors.ts';
import { refusedPage } from './user.ts';

/** A repository as the pages show it. */
export interface RepoRecord {
  id: number;
  org: string;
  name: string;
  full_name: string;
  visibility: string;
  description: string;
  default_branch: string;
  clone_url: string;
}

/** A repository with what the viewer may do with it. */
export type SeenRepo = RepoRecord & { access: Access; repository: Repository };

/** The view of a repository for the pages. */
export function repoRecord(config: Config, repo: Repository): RepoRecord {
  const fullName = `${repo.org}/${repo.name}`;
  return {
    id: repo.id,
    org: repo.org,
    name: repo.name,
    full_name: fullName,
    visibility: repo.visibility,
    description: repo.description,
    default_branch: repo.default_branch,
    clone_url: `${config.baseUrl}/${fullName}.git`,
  };
}

/** Read-only look-ups behind the organization and repository pages. */
export interface Reader {
  orgRepos(org: string): Promise<RepoRecord[]>;
  repo(org: string, name: string, level?: AccessLevel): Promise<SeenRepo>;
}

/**
 * Reads through the same domain functions and access rules as the API, as the signed-in
 * user, or with no user when signed out: then only public repositories show (as anonymous
 * clone sees them); anything the viewer may not see is the same 404 whether it exists or not.
 */
export function readerFor(ctx: Context, services: Services): Reader {
  const { db, config } = services;
  const user = ui(ctx).user;
  return {
    async orgRepos(org) {
      const found = await findOrg(db, org);
      if (!found) throw new PageError(404, 'Not found', `Organization ${org} does not exist, or you may not see it.`);
      return (await listRepositories(db, found, user)).map((r) => repoRecord(config, r));
    },
    async repo(org, name, level = 'read') {
      const found = await repositoryFor(db, org, name, user, level);
      if (found.refused) throw refusedPage(found.refused, `Repository ${org}/${name} does not exist, or you may not see it.`, forbiddenMessage(level));
      return { ...repoRecord(config, found.repo), access: found.access, repository: found.repo };
    },
  };
}
