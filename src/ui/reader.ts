import type { Context } from 'koa';
import type { Services } from '../services.ts';
import { findOrg } from '../domain/accounts.ts';
import { accessTo, findRepository, listRepositories } from '../domain/repos.ts';
import { presentRepository } from '../api/present.ts';
import { seg } from './apiClient.ts';
import { ui } from './context.ts';
import { PageError } from './errors.ts';

/** A repository as the API presents it (SPEC §6 repository fields and clone_url). */
export type RepoRecord = ReturnType<typeof presentRepository>;

/** Read-only look-ups behind the organization and repository pages. */
export interface Reader {
  orgRepos(org: string): Promise<RepoRecord[]>;
  repo(org: string, name: string): Promise<RepoRecord>;
}

const notFound = (what: string) => new PageError(404, 'Not found', `${what} does not exist, or you may not see it.`);

/**
 * The signed-in reader goes through the REST API with the user's token. The API needs a
 * token on every call, so a signed-out visitor is served from the same domain functions
 * the API uses, with no user: they see public repositories only (as anonymous clone does).
 */
export function readerFor(ctx: Context, services: Services): Reader {
  const api = ui(ctx).api;
  if (api) {
    return {
      orgRepos: (org) => api.get(`/api/v1/orgs/${seg(org)}/repos`),
      repo: (org, name) => api.get(`/api/v1/repos/${seg(org)}/${seg(name)}`),
    };
  }
  const { db, config } = services;
  return {
    async orgRepos(org) {
      const found = await findOrg(db, org);
      if (!found) throw notFound(`Organization ${org}`);
      return (await listRepositories(db, found, null)).map((r) => presentRepository(config, r));
    },
    async repo(org, name) {
      const found = await findRepository(db, org, name);
      if (!found || !(await accessTo(db, found, null)).read) throw notFound(`Repository ${org}/${name}`);
      return presentRepository(config, found);
    },
  };
}
