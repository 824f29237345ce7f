import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { repoDir } from '../../git/bare.ts';
import { ui } from '../context.ts';
import { listIssues } from '../../domain/issues.ts';
import { html, type SafeHtml } from '../html.ts';
import { renderPage } from '../layout.ts';
import { readerFor, type RepoRecord, type SeenRepo } from '../reader.ts';
import { readRefs, recentCommits, type RefInfo } from '../gitRead.ts';
import { plural, shortSha, timeTag } from '../format.ts';
import { visibilityBadge } from './home.ts';
import { failingPushRecords } from '../../pushes/records.ts';
import { parkedPushRecords } from '../../pushes/parking.ts';
import { findMirror } from '../../pullMirrors/state.ts';
import { mirrorCard } from '../pages/mirror.ts';
import { commitHref, refPath } from '../pages/history.ts';
import { folderView } from '../code/folder.ts';
import { listTree } from '../../git/tree.ts';
import { pushHelp } from '../pages/pushHelp.ts';

const SHOWN_REFS = 50;

/** The tabs of a repository's pages, each the first page of a part (history opens on the default branch). */
export type RepoTab = 'code' | 'issues' | 'pulls' | 'commits' | 'branches' | 'tags' | 'releases' | 'settings';

/** The title block and tabs shared by a repository's pages. */
export function repoHeader(repo: RepoRecord, owner: boolean, active: RepoTab): SafeHtml {
  const base = `/${repo.org}/${repo.name}`;
  const tabs: Array<[RepoTab, string, string]> = [
    ['code', 'Code', base],
    ['issues', 'Issues', `${base}/issues`],
    ['pulls', 'Pull requests', `${base}/pulls`],
    ['commits', 'Commits', `${base}/commits/${encodeURIComponent(repo.default_branch)}`],
    ['branches', 'Branches', `${base}/branches`],
    ['tags', 'Tags', `${base}/tags`],
    ['releases', 'Releases', `${base}/releases`],
  ];
  if (owner) tabs.push(['settings', 'Settings · Webhooks', `${base}/settings/hooks`]);
  return html`<div class="heading"><h1><a href="/${repo.org}">${repo.org}</a> / <a href="${base}">${repo.name}</a> ${visibilityBadge(repo.visibility)}</h1></div>
  ${repo.description ? html`<p class="muted">${repo.description}</p>` : ''}
  <nav class="tabs" aria-label="Repository">${tabs.map(([tab, label, href]) => html`<a href="${href}" ${active === tab ? html`aria-current="page"` : ''}>${label}</a>`)}</nav>`;
}

function refList(repo: RepoRecord, title: string, refs: RefInfo[], total = refs.length) {
  const shown = refs.slice(0, SHOWN_REFS);
  const more = total > SHOWN_REFS ? html`<li class="muted">and ${total - SHOWN_REFS} more</li>` : '';
  return html`<section class="card"><h2>${title} <span class="count">${total}</span></h2>
  ${refs.length ? html`<ul class="refs">${shown.map((r) => html`<li><a class="ref" href="/${repo.org}/${repo.name}/tree/${refPath(r.name)}">${r.name}</a> <code class="sha">${shortSha(r.sha)}</code></li>`)}${more}</ul>` : html`<p class="empty">None.</p>`}</section>`;
}

// Signed out, the section is left out, as it was when the pages read issues through the API (which needs a token).
async function issuesSection(ctx: Context, services: Services, repo: SeenRepo): Promise<SafeHtml | ''> {
  if (!ui(ctx).user) return '';
  const issues = await listIssues(services.db, repo.repository, { kind: 'issue', state: 'open', limit: 20 });
  const list = issues.length
    ? html`<ul class="list">${issues.map((i) => html`<li class="row"><span><span class="muted">#${i.number}</span> <a href="/${repo.org}/${repo.name}/issues/${i.number}">${i.title}</a></span> ${timeTag(i.created_at)}</li>`)}</ul>`
    : html`<p class="empty">No open issues.</p>`;
  return html`<section class="card"><h2>Open issues <span class="count">${issues.length}</span></h2>${list}</section>`;
}

/** The repository page: clone URL, the default branch's files and README, recent commits, branches, tags, open issues. */
export function repoRoutes(router: Router, services: Services) {
  router.get('/:org/:repo', async (ctx) => {
    // A clone URL pasted into the browser shows the repository, as on other forges.
    if (ctx.params.repo.endsWith('.git') && ctx.params.repo.length > 4)
      return ctx.redirect(`/${encodeURIComponent(ctx.params.org)}/${encodeURIComponent(ctx.params.repo.slice(0, -4))}`);
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const dir = repoDir(services.config.reposDir, repo.org, repo.name);
    const [refs, owner, issues, failing, parked, mirror] = await Promise.all([
      readRefs(dir, SHOWN_REFS),
      repo.access.admin,
      issuesSection(ctx, services, repo),
      failingPushRecords(services.db, repo.id),
      parkedPushRecords(services.db, repo.id),
      findMirror(services.db, repo.id),
    ]);
    // A push whose events keep failing to be recorded is said here: its webhooks are not told yet.
    const pushNote = failing
      ? html`<p class="flash error" role="status">The webhook events of ${plural(failing.count, 'push', 'pushes')} have not been recorded yet (${plural(failing.attempts, 'failed attempt')}); the next try is ${timeTag(new Date(failing.nextTryAt).toISOString())}.</p>`
      : '';
    // A parked one is never tried again by itself: said apart, with no next try to promise.
    const parkedNote = parked
      ? html`<p class="flash error" role="status">The webhook events of ${plural(parked, 'push', 'pushes')} were parked: recording them failed in a way that will not pass by itself, so they are not tried again; later pushes are recorded as usual.</p>`
      : '';
    const branch = refs.branches.find((b) => b.name === repo.default_branch) ?? refs.branches[0];
    // The log and the root folder (with its README) read side by side: each is a git of its own.
    const [commits, files] = branch
      ? await Promise.all([
          recentCommits(dir, branch.name),
          listTree(dir, branch.sha).then((tree) => folderView(dir, repo, { name: branch.name, kind: 'branch', commit: branch.sha }, [], tree)),
        ])
      : [[], ''];
    const history = branch
      ? html`<section class="card"><h2>Recent commits on <span class="ref">${branch.name}</span></h2><ul class="list commits">${commits.map(
          (c) =>
            html`<li class="row"><span><code class="sha">${shortSha(c.sha)}</code> <a href="${commitHref(repo, c.sha)}">${c.subject}</a></span><span class="muted">${c.author} · ${timeTag(c.time)}</span></li>`,
        )}</ul></section>`
      : pushHelp(repo);
    renderPage(
      ctx,
      { title: repo.full_name, crumbs: [{ label: repo.org, href: `/${repo.org}` }, { label: repo.name }] },
      html`${repoHeader(repo, owner, 'code')}${pushNote}${parkedNote}${mirror ? mirrorCard(ctx, `/${repo.org}/${repo.name}`, mirror, owner) : ''}
      <section class="card clone"><label for="clone-url">Clone over HTTP</label><div class="copy"><textarea id="clone-url" class="copy-field" readonly rows="1" spellcheck="false">${repo.clone_url}</textarea><button type="button" class="js-only" data-copy="#clone-url">Copy</button></div>
      <p class="muted">Default branch <span class="ref">${repo.default_branch}</span> · ${plural(refs.branches.length, 'branch', 'branches')} · ${plural(refs.tagCount, 'tag')}</p></section>
      ${files}
      <div class="columns"><div>${history}${issues}</div><div>${refList(repo, 'Branches', refs.branches)}${refList(repo, 'Tags', refs.tags, refs.tagCount)}</div></div>`,
    );
  });
}
