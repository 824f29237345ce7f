import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { listRefNames, refEntries, type RefEntry } from '../../git/history.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import type { SeenRepo } from '../reader.ts';
import { plural, shortSha, timeTag } from '../format.ts';
import { repoHeader } from './repo.ts';
import { commitHref, pageNumber, pager, refPath, repoHref } from '../pages/history.ts';
import { repoCrumbs, seenRepo } from './repoAddress.ts';

const PER_PAGE = 100;

type Kind = 'branches' | 'tags';

function refRow(repo: SeenRepo, kind: Kind, ref: RefEntry) {
  const isDefault = kind === 'branches' && ref.name === repo.default_branch;
  const commit = ref.commit
    ? html`<a href="${commitHref(repo, ref.commit)}"><code class="sha">${shortSha(ref.commit)}</code></a> ${ref.subject}`
    : html`<span class="muted">not a commit</span>`;
  const compare =
    kind === 'branches' && !isDefault ? html` · <a href="${repoHref(repo, `compare/${refPath(repo.default_branch)}...${refPath(ref.name)}`)}">Compare</a>` : '';
  return html`<li class="row ref-row"><div><a class="ref strong" href="${repoHref(repo, `tree/${refPath(ref.name)}`)}">${ref.name}</a>${isDefault ? html` <span class="badge">default</span>` : ''}
    <p class="muted">${commit}</p></div>
    <div class="ref-side"><span class="muted">${timeTag(ref.time)}</span> <span><a href="${repoHref(repo, `commits/${refPath(ref.name)}`)}">Commits</a>${compare}</span></div></li>`;
}

async function refsPage(ctx: Context, services: Services, kind: Kind) {
  const { repo, dir } = await seenRepo(ctx, services);
  const page = pageNumber(ctx.query.page);
  if (page === null) throw new PageError(404, 'Not found', `There is no such page of ${kind}.`);
  const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim().slice(0, 200) : '';
  const prefix = kind === 'branches' ? 'refs/heads/' : 'refs/tags/';
  let names = await listRefNames(dir, prefix);
  if (kind === 'branches') {
    // The default branch first, then the rest newest first (the order git sorted them in).
    const at = names.indexOf(prefix + repo.default_branch);
    if (at > 0) names = [names[at], ...names.slice(0, at), ...names.slice(at + 1)];
  }
  const all = names.length;
  if (q) names = names.filter((n) => n.slice(prefix.length).toLowerCase().includes(q.toLowerCase()));
  const pages = Math.max(1, Math.ceil(names.length / PER_PAGE));
  if (page > pages) throw new PageError(404, 'Not found', `There is no page ${page} of ${kind}.`);
  // Only the shown page's refs are read in full (their commits, tag objects and subjects).
  const shown = await refEntries(dir, names.slice((page - 1) * PER_PAGE, page * PER_PAGE));
  const base = repoHref(repo, kind);
  const at = (n: number) => {
    const params = new URLSearchParams();
    if (q) params.set('q', q);
    if (n > 1) params.set('page', String(n));
    const query = params.toString();
    return query ? `${base}?${query}` : base;
  };
  const title = kind === 'branches' ? 'Branches' : 'Tags';
  const word = kind === 'branches' ? 'branch' : 'tag';
  const found = q ? html`${plural(names.length, word, kind)} of ${all} contain “${q}”` : plural(all, word, kind);
  const list = shown.length
    ? html`<ul class="list refs-list">${shown.map((r) => refRow(repo, kind, r))}</ul>`
    : html`<p class="empty">No ${kind}${q ? ' match' : ''}.</p>`;
  renderPage(
    ctx,
    { title: `${title} · ${repo.full_name}`, crumbs: repoCrumbs(repo, title) },
    html`${repoHeader(repo, repo.access.admin, kind)}
    <section class="card"><div class="heading"><h2>${title} <span class="count">${all}</span></h2>
    <form method="get" action="${base}" class="ref-filter" role="search"><label for="ref-q" class="sr-only">Find ${kind === 'branches' ? 'a branch' : 'a tag'}</label><input id="ref-q" name="q" type="search" value="${q}" placeholder="Find ${kind === 'branches' ? 'a branch' : 'a tag'}…"><button type="submit">Find</button></form></div>
    <p class="muted">${found}${pages > 1 ? html` · page ${page} of ${pages}` : ''}</p>
    ${list}${pager(['Previous', 'Next'], page > 1 ? at(page - 1) : null, page < pages ? at(page + 1) : null)}</section>`,
  );
}

/** The branches and tags pages, 100 a page, with a filter by name. */
export function refRoutes(router: Router, services: Services) {
  router.get('/:org/:repo/branches', (ctx) => refsPage(ctx, services, 'branches'));
  router.get('/:org/:repo/tags', (ctx) => refsPage(ctx, services, 'tags'));
}
