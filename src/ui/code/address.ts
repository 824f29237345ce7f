import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { repoDir } from '../../git/bare.ts';
import { safeSegments, splitRevisionPath, type Revision } from '../../git/revision.ts';
import { objectAt, type FoundObject } from '../../git/tree.ts';
import { PageError } from '../errors.ts';
import { readerFor, type SeenRepo } from '../reader.ts';

/** The three views of a path at a revision. */
export type CodeView = 'tree' | 'blob' | 'raw';

/** What a code page's address names, checked: a readable repository, a revision of it and a path. */
export interface CodeAddress {
  repo: SeenRepo;
  dir: string;
  revision: Revision;
  path: string[];
}

/** The address of a view of `path` at a revision of a repository, each part encoded. */
export function codeHref(repo: { org: string; name: string }, view: CodeView, ref: string, path: string[] = []): string {
  const parts = [...ref.split('/'), ...path].map(encodeURIComponent);
  return `/${encodeURIComponent(repo.org)}/${encodeURIComponent(repo.name)}/${view}/${parts.join('/')}`;
}

function notFound(what: string): PageError {
  return new PageError(404, 'Not found', what);
}

/**
 * Reads `<ref>/<path>` of a code page's address (the router has decoded it) for a viewer
 * who may read the repository (else the same 404 as a missing one). An unsafe segment
 * (`..`, NUL, a leading `-`, a backslash) and an unknown ref are 404s.
 */
export async function resolveCodeAddress(ctx: Context, services: Services, rest: string | undefined): Promise<CodeAddress> {
  const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
  const segments = safeSegments((rest ?? '').replace(/\/$/, ''));
  if (!segments || segments.length === 0) throw notFound('There is no such branch, tag, commit or path in this repository.');
  const dir = repoDir(services.config.reposDir, repo.org, repo.name);
  const split = await splitRevisionPath(dir, segments);
  if (!split) throw notFound(`No branch, tag or commit of ${repo.full_name} is named by this address.`);
  return { repo, dir, revision: split.revision, path: split.path };
}

/** The object an address's path names (with a blob's content up to `contentCap` bytes), or the 404 page. */
export async function objectOf(at: CodeAddress, contentCap = 0): Promise<FoundObject> {
  const found = await objectAt(at.dir, at.revision.commit, at.path, contentCap);
  if (!found) throw pathNotFound(at);
  return found;
}

/** The 404 of a path missing at a revision. */
export function pathNotFound(at: CodeAddress): PageError {
  return notFound(`${at.path.join('/')} does not exist at ${at.revision.name}.`);
}
