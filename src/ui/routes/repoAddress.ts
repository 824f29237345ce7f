import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { repoDir } from '../../git/bare.ts';
import { resolveRevision, type Revision } from '../../git/revision.ts';
import { PageError } from '../errors.ts';
import type { Crumb } from '../layout.ts';
import { readerFor, type SeenRepo } from '../reader.ts';

/** The repository an address names (`:org/:repo`), as the viewer may see it (else the 404 page), and its directory. */
export async function seenRepo(ctx: Context, services: Services): Promise<{ repo: SeenRepo; dir: string }> {
  const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
  return { repo, dir: repoDir(services.config.reposDir, repo.org, repo.name) };
}

/** The revision an address names, or the 404 page (unsafe names included: `..`, NUL, a leading `-`). */
export async function revisionOr404(dir: string, repo: SeenRepo, name: string): Promise<Revision> {
  const revision = name ? await resolveRevision(dir, name) : null;
  if (!revision) throw new PageError(404, 'Not found', `${repo.full_name} has no branch, tag or commit named ${name || '(nothing)'}.`);
  return revision;
}

/** The breadcrumb trail of a repository's page: organization, repository, the page. */
export function repoCrumbs(repo: SeenRepo, label: string): Crumb[] {
  return [{ label: repo.org, href: `/${repo.org}` }, { label: repo.name, href: `/${repo.org}/${repo.name}` }, { label }];
}
