import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { ui } from '../context.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { readerFor, type RepoRecord } from '../reader.ts';
import { plural } from '../format.ts';
import { findOrg, orgsFor, roleIn } from '../../domain/accounts.ts';

/** A repository's visibility as a small coloured label. */
export function visibilityBadge(visibility: string) {
  return html`<span class="badge ${visibility}">${visibility[0].toUpperCase() + visibility.slice(1)}</span>`;
}

/** One repository in a list. */
export function repoRow(repo: RepoRecord) {
  return html`<li class="row">
    <div><a href="/${repo.org}/${repo.name}" class="strong">${repo.full_name}</a> ${visibilityBadge(repo.visibility)}
    ${repo.description ? html`<p class="muted">${repo.description}</p>` : ''}</div>
  </li>`;
}

/** Start page (the user's organizations, or a welcome) and organization pages (their repositories). */
export function homeRoutes(router: Router, services: Services) {
  router.get('/', async (ctx) => {
    const { user } = ui(ctx);
    if (!user) {
      renderPage(
        ctx,
        { title: 'Welcome' },
        html`<section class="hero"><h1>Wharf</h1><p>Git hosting with webhooks that never lose an event and imports that bring a repository over whole.</p>
        <p><a class="button primary" href="/-/login">Sign in with a token</a></p>
        <p class="muted">Public repositories can be browsed without signing in: open <code>/&lt;organization&gt;</code>.</p></section>`,
      );
      return;
    }
    const mine = await orgsFor(services.db, user);
    const orgs = mine.length
      ? html`<ul class="list">${mine.map((o) => html`<li class="row"><a class="strong" href="/${o.name}">${o.name}</a> <span class="badge">${o.role}</span></li>`)}</ul>`
      : html`<p class="empty">You are not a member of any organization yet.</p>`;
    renderPage(
      ctx,
      { title: 'Your organizations' },
      html`<div class="heading"><h1>Your organizations</h1><nav class="org-links" aria-label="Create">${mine.some((o) => o.role === 'owner') ? html`<a class="button" href="/-/new">New repository</a>` : ''}${user.is_admin ? html`<a class="button" href="/-/orgs/new">New organization</a>` : ''}<a class="button" href="/-/import">Import a repository</a></nav></div>
      <section class="card">${orgs}</section>`,
    );
  });

  router.get('/:org', async (ctx) => {
    const org = ctx.params.org;
    const repos = await readerFor(ctx, services).orgRepos(org);
    // Its owners manage the organization's webhooks (SPEC §5.4) and see its imports.
    const found = await findOrg(services.db, org);
    const user = ui(ctx).user;
    const role = found && user ? await roleIn(services.db, found.id, user) : null;
    const owner = role === 'owner';
    const list = repos.length
      ? html`<ul class="list">${repos.map(repoRow)}</ul>`
      : html`<p class="empty">No repositories you can see. ${ui(ctx).user ? html`<a href="/-/import?org=${org}">Import one</a> or push to <code>${services.config.baseUrl}/${org}/&lt;name&gt;.git</code>.` : ''}</p>`;
    renderPage(
      ctx,
      { title: org, crumbs: [{ label: org }] },
      html`<div class="heading"><h1>${org}</h1><span class="muted">${plural(repos.length, 'repository', 'repositories')}</span>${role ? html`<nav class="org-links" aria-label="${org}">${owner ? html`<a class="button primary" href="/-/new?org=${org}">New repository</a>` : ''}<a class="button" href="/-/orgs/${org}/members">Members</a>${owner ? html`<a class="button" href="/-/orgs/${org}/imports">Imports</a><a class="button" href="/-/orgs/${org}/settings/hooks">Webhooks</a>` : ''}</nav>` : ''}</div>
      <section class="card">${list}</section>`,
    );
  });
}
