import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { ApiError } from '../apiClient.ts';
import { redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { deliveryItem, type Delivery } from '../pages/delivery.ts';
import { hookContext, hookId, type Hook } from './webhooks.ts';

/** One page of GET /webhooks/<id>/deliveries (SPEC §5.2). */
interface DeliveryPage {
  total: number;
  successful: number;
  failed: number;
  pending: number;
  deliveries: Delivery[];
  next_cursor: string | null;
}

const PAGE_SIZE = 20;
const STATUSES = ['success', 'failed', 'pending'];

/** A webhook's page (counts, recent deliveries unfolding to request and response), Ping and Redeliver. */
export function deliveryRoutes(router: Router, _services: Services) {
  const base = '/:org/:repo/settings/hooks/:id';

  router.get(base, async (ctx) => {
    const { api, repo, apiBase, pageBase, crumbs } = await hookContext(ctx);
    const id = hookId(ctx.params.id);
    const hook: Hook = await api.get(`${apiBase}/${id}`);
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    const status = typeof ctx.query.status === 'string' && STATUSES.includes(ctx.query.status) ? ctx.query.status : undefined;
    if (status) query.set('status', status);
    if (typeof ctx.query.cursor === 'string' && ctx.query.cursor.length < 200) query.set('cursor', ctx.query.cursor);
    const page: DeliveryPage = await api.get(`/api/v1/webhooks/${id}/deliveries?${query}`);
    // The list has no request or response; each unfolded entry needs its full record.
    const full: Delivery[] = await Promise.all(page.deliveries.map((d) => api.get(`/api/v1/webhooks/${id}/deliveries/${d.id}`).catch(() => d)));
    const here = `${pageBase}/${id}`;
    const filter = (label: string, value?: string) =>
      html`<a href="${value ? `${here}?status=${value}` : here}" ${status === value ? html`aria-current="page"` : ''}>${label}</a>`;
    const list = full.length
      ? html`<ul class="deliveries">${full.map((d) => deliveryItem(ctx, d, `${here}/deliveries/${d.id}/redeliver`))}</ul>`
      : html`<p class="empty">No deliveries${status ? ' with this result' : ''} yet.</p>`;
    const older = page.next_cursor ? html`<p><a class="button" href="${here}?${new URLSearchParams({ ...(status ? { status } : {}), cursor: page.next_cursor }).toString()}">Older deliveries</a></p>` : '';
    const pending = full.some((d) => d.status === 'pending');
    renderPage(
      ctx,
      // While something is pending the page reloads itself: with a script (which waits while a delivery is unfolded), or by refresh without one.
      { title: `Webhook ${hook.url}`, crumbs: [...crumbs, { label: `#${hook.id}` }], head: pending ? html`<noscript><meta http-equiv="refresh" content="3"></noscript>` : undefined },
      html`<div class="heading"><h1 class="url">${hook.url} ${hook.active ? html`<span class="result ok">Active</span>` : html`<span class="result wait">Inactive</span>`}</h1></div>
      <p class="muted">Events: ${hook.events.includes('*') ? 'everything' : hook.events.join(', ')}${hook.branch_filter ? html` · branches <code>${hook.branch_filter}</code>` : ''}</p>
      <div class="actions">
        <form method="post" action="${here}/ping" class="inline">${csrfField(ctx)}<button type="submit" class="primary">Ping</button></form>
        <a class="button" href="${here}/edit">Edit</a><a class="button danger" href="${here}/delete">Delete</a>
      </div>
      <dl class="counts"><div><dt>Total</dt><dd>${page.total}</dd></div><div class="ok"><dt>Successful</dt><dd>${page.successful}</dd></div><div class="bad"><dt>Failed</dt><dd>${page.failed}</dd></div>${page.pending ? html`<div class="wait"><dt>Pending</dt><dd>${page.pending}</dd></div>` : ''}</dl>
      <section class="card"><div class="heading"><h2>Recent deliveries</h2><nav class="filters">${filter('All')}${filter('Successful', 'success')}${filter('Failed', 'failed')}${filter('Pending', 'pending')}</nav></div>
      ${list}${older}${pending ? html`<p class="muted" data-reload-after="3000">Pending deliveries: this page refreshes until they finish.</p>` : ''}</section>`,
    );
  });

  router.post(`${base}/ping`, async (ctx) => {
    const { api, apiBase, pageBase } = await hookContext(ctx);
    const id = hookId(ctx.params.id);
    await api.get(`${apiBase}/${id}`); // the webhook must belong to this repository
    await api.post(`/api/v1/webhooks/${id}/ping`);
    redirectWithFlash(ctx, `${pageBase}/${id}`, 'Ping sent.');
  });

  router.post(`${base}/deliveries/:did/redeliver`, async (ctx) => {
    const { api, apiBase, pageBase } = await hookContext(ctx);
    const id = hookId(ctx.params.id);
    const did = ctx.params.did;
    if (!/^[1-9]\d{0,15}$/.test(did)) throw new PageError(404, 'Not found', 'No such delivery.');
    await api.get(`${apiBase}/${id}`);
    try {
      await api.post(`/api/v1/webhooks/${id}/deliveries/${did}/retry`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return redirectWithFlash(ctx, `${pageBase}/${id}`, 'That delivery is still pending; redeliver it once it has finished.', 'error');
      throw err;
    }
    redirectWithFlash(ctx, `${pageBase}/${id}`, 'Redelivery queued.');
  });
}
