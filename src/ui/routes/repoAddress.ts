import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { repoDir } from '../../git/bare.ts';
import { resolveRevision, type Revision } from '../../git/revision.ts';
import { git } from '../../git/run.ts';
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
  if (revision) return revision;
  // The Commits tab of a repository nobody pushed to yet leads here: say that, not just "no such branch".
  const empty = (await git(['for-each-ref', '--count=1', '--format=x', 'refs/heads/', 'refs/tags/'], { cwd: dir })).trim() === '';
  if (empty) throw new PageError(404, 'Not found', `${repo.full_name} is empty: nothing has been pushed to it yet.`);
  throw new PageError(404, 'Not found', `${repo.full_name} has no branch, tag or commit named ${name || '(nothing)'}.`);
}

/** The breadcrumb trail of a repository's page: organization, repository, the page. */
export function repoCrumbs(repo: SeenRepo, label: string): Crumb[] {
  return [{ label: repo.org, href: `/${repo.org}` }, { label: repo.name, href: `/${repo.org}/${repo.name}` }, { label }];
}
