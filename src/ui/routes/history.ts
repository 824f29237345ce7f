import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import type { Revision } from '../../git/revision.ts';
import { commitDetails, listCommits, mergeBase } from '../../git/history.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import type { SeenRepo } from '../reader.ts';
import { shortSha, timeTag } from '../format.ts';
import { repoHeader } from './repo.ts';
import { diffView } from '../pages/diff.ts';
import { commitHref, commitRows, pageNumber, pager, refPath, repoHref } from '../pages/history.ts';
import { refRoutes } from './refs.ts';
import { repoCrumbs, revisionOr404, seenRepo } from './repoAddress.ts';

const PER_PAGE = 50;
/** Commits a compare page lists at most (GitHub shows 250). */
const COMPARED = 250;

async function commitsPage(ctx: Context, services: Services) {
  const { repo, dir } = await seenRepo(ctx, services);
  const revision = await revisionOr404(dir, repo, ctx.params.ref ?? '');
  const page = pageNumber(ctx.query.page);
  if (page === null) throw new PageError(404, 'Not found', 'There is no such page of commits.');
  // One more than a page: its presence is what shows the "Older" link, without counting the history.
  const found = await listCommits(dir, [revision.commit], { skip: (page - 1) * PER_PAGE, count: PER_PAGE + 1 });
  if (found.length === 0 && page > 1) throw new PageError(404, 'Not found', `${revision.name} has fewer than ${(page - 1) * PER_PAGE + 1} commits.`);
  const base = repoHref(repo, `commits/${refPath(revision.name)}`);
  const nav = pager(
    ['Newer', 'Older'],
    page > 1 ? (page === 2 ? base : `${base}?page=${page - 1}`) : null,
    found.length > PER_PAGE ? `${base}?page=${page + 1}` : null,
  );
  const what = revision.kind === 'commit' ? html`<code class="sha">${shortSha(revision.commit)}</code>` : html`<span class="ref">${revision.name}</span>`;
  renderPage(
    ctx,
    { title: `Commits · ${revision.name} · ${repo.full_name}`, crumbs: repoCrumbs(repo, 'Commits') },
    html`${repoHeader(repo, repo.access.admin, 'commits')}
    <section class="card"><div class="heading"><h2>Commits on ${what}</h2>${page > 1 ? html`<span class="muted">Page ${page}</span>` : ''}</div>
    ${commitRows(repo, found.slice(0, PER_PAGE))}${nav}</section>`,
  );
}

function person(who: { name: string; email: string; time: number }) {
  return html`${who.name} <span class="muted">&lt;${who.email}&gt;</span> · ${timeTag(who.time)}`;
}

async function commitPage(ctx: Context, services: Services) {
  const { repo, dir } = await seenRepo(ctx, services);
  const revision = await revisionOr404(dir, repo, ctx.params.rev ?? '');
  const [commit, diff] = await Promise.all([commitDetails(dir, revision.commit), diffView(dir, { base: null, head: revision.commit })]);
  const [first] = commit.parents;
  const parents = commit.parents.map((p, i) => html`${i ? ', ' : ''}<a href="${commitHref(repo, p)}"><code class="sha">${shortSha(p)}</code></a>`);
  const mergeNote =
    commit.parents.length > 1
      ? html`<p class="muted">A merge of ${commit.parents.length} parents: the changes are shown against the first parent, <a href="${commitHref(repo, first)}"><code class="sha">${shortSha(first)}</code></a>.</p>`
      : '';
  renderPage(
    ctx,
    { title: `${commit.subject} · ${shortSha(commit.sha)} · ${repo.full_name}`, crumbs: repoCrumbs(repo, `Commit ${shortSha(commit.sha)}`) },
    html`${repoHeader(repo, repo.access.admin, 'commits')}
    <section class="card commit"><h2 class="commit-subject">${commit.subject || '(no message)'}</h2>
    ${commit.body ? html`<pre class="commit-body">${commit.body}</pre>` : ''}${commit.cut ? html`<p class="muted">The message is too long to show in full.</p>` : ''}
    <dl class="facts">
      <div><dt>Author</dt><dd>${person(commit.author)}</dd></div>
      ${commit.committer.name !== commit.author.name || commit.committer.email !== commit.author.email || commit.committer.time !== commit.author.time ? html`<div><dt>Committer</dt><dd>${person(commit.committer)}</dd></div>` : ''}
      <div><dt>Commit</dt><dd><code class="guid">${commit.sha}</code></dd></div>
      <div><dt>${commit.parents.length === 1 ? 'Parent' : 'Parents'}</dt><dd>${commit.parents.length ? parents : html`<span class="muted">none (the first commit)</span>`}</dd></div>
    </dl>${mergeNote}
    <p class="actions"><a class="button" href="${repoHref(repo, `tree/${commit.sha}`)}">Browse files</a><a class="button" href="${repoHref(repo, `commits/${commit.sha}`)}">History from here</a></p></section>
    ${diff}`,
  );
}

/** Splits `base...head` (or `base..head`); ref names never hold `..`, so the first one is the separator. */
function compareSpec(spec: string): { base: string; head: string; threeDots: boolean } | null {
  const at = spec.indexOf('..');
  if (at <= 0) return null;
  const threeDots = spec[at + 2] === '.';
  const head = spec.slice(at + (threeDots ? 3 : 2));
  return head ? { base: spec.slice(0, at), head, threeDots } : null;
}

function compareForm(repo: SeenRepo, base = '', head = '') {
  return html`<form method="get" action="${repoHref(repo, 'compare')}" class="card compare-form"><h2>Compare</h2>
    <p class="hint">Two branches, tags or commit ids: the commits in the second that are not in the first, and their changes.</p>
    <div class="compare-fields"><label>Base <input name="base" value="${base || repo.default_branch}" required spellcheck="false"></label>
    <label>Compare <input name="head" value="${head}" required spellcheck="false"></label><button type="submit" class="primary">Compare</button></div></form>`;
}

async function comparePage(ctx: Context, services: Services) {
  const { repo, dir } = await seenRepo(ctx, services);
  const spec = compareSpec(ctx.params.spec ?? '');
  if (!spec) {
    const { base, head } = ctx.query;
    if (!ctx.params.spec && typeof base === 'string' && typeof head === 'string' && base && head)
      return ctx.redirect(repoHref(repo, `compare/${refPath(base)}...${refPath(head)}`));
    const status = ctx.params.spec ? 404 : 200;
    return renderPage(
      ctx,
      { title: `Compare · ${repo.full_name}`, crumbs: repoCrumbs(repo, 'Compare'), status },
      html`${repoHeader(repo, repo.access.admin, 'commits')}${status === 404 ? html`<p class="flash error" role="alert">A comparison is written base...head.</p>` : ''}${compareForm(repo)}`,
    );
  }
  const [base, head] = await Promise.all([revisionOr404(dir, repo, spec.base), revisionOr404(dir, repo, spec.head)]);
  // Three dots, as on GitHub: the changes since the two histories parted; two dots: between the two tips.
  const from = spec.threeDots ? await mergeBase(dir, base.commit, head.commit) : base.commit;
  const [commits, diff] = await Promise.all([
    listCommits(dir, [head.commit], { hidden: [base.commit], count: COMPARED + 1 }),
    from || !spec.threeDots ? diffView(dir, { base: from, head: head.commit }) : Promise.resolve(null),
  ]);
  const shown = commits.slice(0, COMPARED).reverse();
  const more =
    commits.length > COMPARED
      ? html`<p class="muted">Showing the latest ${COMPARED} commits; <a href="${repoHref(repo, `commits/${refPath(head.name)}`)}">see them all</a>.</p>`
      : '';
  const name = (r: Revision) => (r.kind === 'commit' ? html`<code class="sha">${shortSha(r.commit)}</code>` : html`<span class="ref">${r.name}</span>`);
  renderPage(
    ctx,
    { title: `Compare ${base.name}${spec.threeDots ? '...' : '..'}${head.name} · ${repo.full_name}`, crumbs: repoCrumbs(repo, 'Compare') },
    html`${repoHeader(repo, repo.access.admin, 'commits')}
    <section class="card"><h2>Comparing ${name(base)} ${spec.threeDots ? '...' : '..'} ${name(head)}</h2>
    ${
      commits.length
        ? html`<p class="muted">${commits.length > COMPARED ? `More than ${COMPARED}` : commits.length} commit${commits.length === 1 ? '' : 's'} in ${head.name} not in ${base.name}, oldest first.</p>${commitRows(repo, shown)}${more}`
        : html`<p class="empty">${head.name} has no commits that ${base.name} does not have.</p>`
    }</section>
    ${diff ?? html`<p class="flash error" role="status">${base.name} and ${head.name} have no common history: there is no change to show since they parted.</p>`}
    ${compareForm(repo, base.name, head.name)}`,
  );
}

/** The history pages: a ref's commits, a commit with its diff, compare, branches and tags. */
export function historyRoutes(router: Router, services: Services) {
  router.get('/:org/:repo/commits', async (ctx) => {
    const { repo } = await seenRepo(ctx, services);
    ctx.redirect(repoHref(repo, `commits/${refPath(repo.default_branch)}`));
  });
  router.get('/:org/:repo/commits/*ref', (ctx) => commitsPage(ctx, services));
  router.get('/:org/:repo/commit/*rev', (ctx) => commitPage(ctx, services));
  router.get('/:org/:repo/compare', (ctx) => comparePage(ctx, services));
  router.get('/:org/:repo/compare/*spec', (ctx) => comparePage(ctx, services));
  refRoutes(router, services);
}
