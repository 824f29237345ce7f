import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { findReleaseByTag, listReleases, type Release } from '../../domain/releases.ts';
import { safeSegments } from '../../git/revision.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { readerFor, type SeenRepo } from '../reader.ts';
import { timeTag } from '../format.ts';
import { cursorParam, olderLink, writtenText } from '../pages/thread.ts';
import { repoHeader } from './repo.ts';

const PAGE_SIZE = 25;

function crumbs(repo: SeenRepo, last: string, listed = true) {
  const base = `/${repo.org}/${repo.name}`;
  return [
    { label: repo.org, href: `/${repo.org}` },
    { label: repo.name, href: base },
    ...(listed ? [{ label: 'Releases', href: `${base}/releases` }] : []),
    { label: last },
  ];
}

/** A release's page: `/<org>/<repo>/releases/tag/<tag>`, as on GitHub (a tag name may hold slashes, kept as they are). */
export function releaseHref(repo: { org: string; name: string }, tag: string): string {
  return `/${repo.org}/${repo.name}/releases/tag/${tag.split('/').map(encodeURIComponent).join('/')}`;
}

function flags(r: Release) {
  return html`${r.draft ? html` <span class="badge">Draft</span>` : ''}${r.prerelease ? html` <span class="badge">Pre-release</span>` : ''}`;
}

/**
 * Release pages (SPEC §12): the list, newest first, and a release by its tag. Drafts show
 * only to organization members (those who may create releases), as on GitHub.
 */
export function releaseRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/:org/:repo/releases', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const releases = await listReleases(db, repo.repository, { limit: PAGE_SIZE, before: cursorParam(ctx.query.before), drafts: repo.access.write });
    const list = releases.length
      ? html`<ul class="list">${releases.map(
          (r) =>
            html`<li class="row"><span><a class="strong" href="${releaseHref(repo, r.tag_name)}">${r.name}</a>${flags(r)} <span class="ref">${r.tag_name}</span></span>
            <span class="muted">${r.published_at ? html`published ${timeTag(r.published_at)}` : html`created ${timeTag(r.created_at)}`}${r.author ? html` by ${r.author}` : ''}</span></li>`,
        )}</ul>`
      : html`<p class="empty">No releases yet.</p>`;
    renderPage(
      ctx,
      { title: `Releases · ${repo.full_name}`, crumbs: crumbs(repo, 'Releases', false) },
      html`${repoHeader(repo, repo.access.admin, 'releases')}<section class="card"><h2>Releases</h2>${list}
      ${olderLink(`/${repo.org}/${repo.name}/releases`, 'all', releases.at(-1)?.id, releases.length === PAGE_SIZE)}</section>`,
    );
  });

  router.get('/:org/:repo/releases/tag/*tag', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const tag = String(ctx.params.tag ?? '');
    const release = safeSegments(tag) ? await findReleaseByTag(db, repo.repository, tag) : undefined;
    if (!release || (release.draft && !repo.access.write)) throw new PageError(404, 'Not found', `There is no release for tag ${tag} in ${repo.full_name}.`);
    const base = `/${repo.org}/${repo.name}`;
    renderPage(
      ctx,
      { title: `${release.name} · ${repo.full_name}`, crumbs: crumbs(repo, release.tag_name) },
      html`${repoHeader(repo, repo.access.admin, 'releases')}
      <article class="card"><h2>${release.name}${flags(release)}</h2>
      <dl class="facts"><div><dt>Tag</dt><dd><a class="ref" href="${base}/tree/${release.tag_name.split('/').map(encodeURIComponent).join('/')}">${release.tag_name}</a></dd></div>
      <div><dt>Target</dt><dd><span class="ref">${release.target_commitish}</span></dd></div>
      <div><dt>Author</dt><dd>${release.author ?? 'ghost'}</dd></div>
      <div><dt>Published</dt><dd>${release.published_at ? timeTag(release.published_at) : 'not yet (draft)'}</dd></div></dl>
      ${writtenText(release.body, 'No release notes.')}</article>`,
    );
  });
}
