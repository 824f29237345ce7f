import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { ownedOrg } from '../../domain/access.ts';
import { listImportJobs } from '../../import/jobs.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { historyRow } from '../pages/importJob.ts';
import { refusedPage, requireUser } from '../user.ts';

const PAGE = 50;

/** Organization → Imports: the organization's import jobs, newest first, for its owners (and site admins) only. */
export function importHistoryRoutes(router: Router, services: Services) {
  router.get('/-/orgs/:org/imports', async (ctx) => {
    const user = requireUser(ctx);
    const owned = await ownedOrg(services.db, ctx.params.org, user);
    if (owned.refused) throw refusedPage(owned.refused, 'Organization not found', 'Only organization owners may see its imports');
    const org = owned.org.name;
    const before = typeof ctx.query.before === 'string' && /^[1-9]\d{0,15}$/.test(ctx.query.before) ? Number(ctx.query.before) : undefined;
    const jobs = await listImportJobs(services.db, user, { orgId: owned.org.id, limit: PAGE, before });
    const list = jobs.length
      ? html`<ul class="list">${jobs.map(historyRow)}</ul>`
      : html`<p class="empty">${before ? 'No older imports.' : 'No imports into this organization yet.'}</p>`;
    const older = jobs.length === PAGE ? html`<p><a href="/-/orgs/${org}/imports?before=${jobs[jobs.length - 1].id}">Older imports</a></p>` : '';
    renderPage(
      ctx,
      { title: `Imports of ${org}`, crumbs: [{ label: org, href: `/${org}` }, { label: 'Imports' }] },
      html`<div class="heading"><h1>Imports of ${org}</h1><a class="button" href="/-/import?org=${org}">Import a repository</a></div>
      <section class="card">${list}${older}</section>`,
    );
  });
}
