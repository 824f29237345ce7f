import type { Context } from 'koa';
import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { sendPing } from '../../webhooks/ping.ts';
import { heldCounts, resumeWebhook } from '../../webhooks/endpointHealth.ts';
import { healthBanner, hookStateBadge } from '../pages/webhookHealth.ts';
import { attemptsOf, bodyOf, findDelivery } from '../../webhooks/deliveries.ts';
import { MAX_BULK_REDELIVERIES, redeliver, redeliverFailed } from '../../webhooks/history.ts';
import { countDeliveryStates, findDeliverySummary, listDeliverySummaries, type DeliveryStateCounts } from '../../webhooks/summaries.ts';
import { checkRedeliveryTimes, redeliveryWindow } from '../../webhooks/input.ts';
import type { DeliveryFilter } from '../../webhooks/deliveries.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { breakable, plural } from '../format.ts';
import { deliveryDetail, deliveryLabel, deliveryRow } from '../pages/delivery.ts';
import { hookContext, hookOf } from './webhooks.ts';

const PAGE_SIZE = 20;
const FILTERS: DeliveryFilter[] = ['success', 'failed', 'pending', 'held'];

/** A delivery id from the path; anything but a positive integer is a 404 page. */
function deliveryId(value: string | undefined): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw new PageError(404, 'Not found', 'No such delivery.');
  return Number(value);
}

/** The id a page cursor stands for (the same cursors the delivery history API gives), or a 422 page. */
function cursorId(cursor: string): number {
  const m = /^d(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m || Buffer.from(`d${m[1]}`).toString('base64url') !== cursor)
    throw new PageError(422, 'Not accepted', 'Validation failed', [{ path: '/cursor', message: 'is not a cursor this API gave' }]);
  return Number(m[1]);
}

/** The counts of a webhook's deliveries: pending shown as retrying and queued, so a failing receiver is not mistaken for a slow one. */
function countCards(counts: DeliveryStateCounts) {
  const card = (kind: string, label: string, n: number) => html`<div class="${kind}"><dt>${label}</dt><dd>${n}</dd></div>`;
  return html`<dl class="counts" data-live="delivery-counts">${card('', 'Total', counts.total)}${card('ok', 'Successful', counts.successful)}${card('bad', 'Failed', counts.failed)}${counts.held ? card('wait', 'Held', counts.held) : ''}${card('wait', 'Retrying', counts.retrying)}${card('', 'Queued', counts.queued)}</dl>`;
}

/** A webhook's page: its counts and recent deliveries (filtered by result, paged), each linking to its own page; one query each. */
async function webhookPage(ctx: Context, services: Services) {
  const { db, config } = services;
  const scope = await hookContext(ctx, services);
  const { pageBase, crumbs } = scope;
  const hook = await hookOf(services, scope, ctx.params.id);
  const id = hook.id;
  const status =
    typeof ctx.query.status === 'string' && FILTERS.includes(ctx.query.status as DeliveryFilter) ? (ctx.query.status as DeliveryFilter) : undefined;
  const before = typeof ctx.query.cursor === 'string' && ctx.query.cursor.length < 200 ? cursorId(ctx.query.cursor) : undefined;
  const [counts, found] = await Promise.all([countDeliveryStates(db, id), listDeliverySummaries(db, id, { status, limit: PAGE_SIZE, before })]);
  const nextCursor = found.next === null ? null : Buffer.from(`d${found.next}`).toString('base64url');
  const here = `${pageBase}/${id}`;
  const tries = config.webhookRetrySchedule.length;
  const filter = (label: string, value?: string) =>
    html`<a href="${value ? `${here}?status=${value}` : here}" ${status === value ? html`aria-current="page"` : ''}>${label}</a>`;
  const list = found.deliveries.length
    ? html`<ul class="deliveries">${found.deliveries.map((d) => deliveryRow(ctx, d, `${here}/deliveries/${d.id}`, `${here}/deliveries/${d.id}/redeliver`, tries))}</ul>`
    : html`<p class="empty">No deliveries${status ? ' with this result' : ''} yet.</p>`;
  const older = nextCursor
    ? html`<p><a class="button" href="${here}?${new URLSearchParams({ ...(status ? { status } : {}), cursor: nextCursor }).toString()}">Older deliveries</a></p>`
    : '';
  const pending = found.deliveries.some((d) => d.status === 'pending');
  renderPage(
    ctx,
    // While something is pending the page updates itself: wharf.js refetches it and swaps the live parts, or a refresh without a script.
    {
      title: `Webhook ${hook.url}`,
      crumbs: [...crumbs, { label: `#${hook.id}` }],
      head: pending ? html`<noscript><meta http-equiv="refresh" content="3"></noscript>` : undefined,
    },
    html`<div class="heading"><h1 class="url">${breakable(hook.url)} ${hookStateBadge(hook)}</h1></div>
    ${healthBanner(ctx, { health: hook.health, held: (await heldCounts(db, [id])).get(id) ?? 0 }, `${here}/resume`)}
    <p class="muted">Events: ${hook.events.includes('*') ? 'everything' : hook.events.join(', ')}${hook.branch_filter ? html` · branches <code>${hook.branch_filter}</code>` : ''}${hook.header_style === 'github' ? html` · GitHub's header names too` : ''}${hook.header_names.length ? html` · custom headers ${hook.header_names.map((n, i) => html`${i ? ', ' : ''}<code>${n}</code>`)}` : ''} · ${plural(tries, 'attempt')} per delivery</p>
    <div class="actions">
      <form method="post" action="${here}/ping" class="inline">${csrfField(ctx)}<button type="submit" class="primary">Ping</button></form>
      <a class="button" href="${here}/edit">Edit</a><a class="button danger" href="${here}/delete">Delete</a>
    </div>
    ${countCards(counts)}
    <section class="card" aria-labelledby="recent-heading"><div class="heading"><h2 id="recent-heading">Recent deliveries</h2><nav class="filters" aria-label="Filter deliveries">${filter('All')}${filter('Successful', 'success')}${filter('Failed', 'failed')}${filter('Pending', 'pending')}${filter('Held', 'held')}</nav></div>
    <div data-live="delivery-list" aria-live="polite">${list}${pending ? html`<p class="muted" data-reload-after="3000">Pending deliveries: this list updates until they finish.</p>` : ''}</div>${older}</section>
    ${bulkRedeliverForm(ctx, here)}`,
  );
}

/** A delivery's own page: state, request, response and attempts; it updates itself while the delivery is pending. */
async function deliveryPage(ctx: Context, services: Services) {
  const { db, config } = services;
  const scope = await hookContext(ctx, services);
  const hook = await hookOf(services, scope, ctx.params.id);
  const d = await findDeliverySummary(db, hook.id, deliveryId(ctx.params.did));
  if (!d) throw new PageError(404, 'Not found', 'Delivery not found');
  const [attempts, body] = await Promise.all([attemptsOf(db, d.id), bodyOf(db, d.id)]);
  const here = `${scope.pageBase}/${hook.id}`;
  renderPage(
    ctx,
    {
      title: `Delivery ${deliveryLabel(d)} · ${hook.url}`,
      crumbs: [...scope.crumbs, { label: `#${hook.id}`, href: here }, { label: `Delivery ${d.id}` }],
      head: d.status === 'pending' ? html`<noscript><meta http-equiv="refresh" content="2"></noscript>` : undefined,
    },
    html`<div class="heading"><h1>Delivery of <code>${deliveryLabel(d)}</code></h1></div>
    <p class="muted">To <span class="url">${breakable(hook.url)}</span> · <a href="${here}">all deliveries of this webhook</a></p>
    ${deliveryDetail(ctx, d, attempts, body, `${here}/deliveries/${d.id}/redeliver`, config.webhookRetrySchedule.length)}`,
  );
}

/** "Redeliver failed deliveries since…": a window as a duration back from now or a time, at most MAX_BULK_REDELIVERIES per submission. */
function bulkRedeliverForm(ctx: Context, here: string) {
  return html`<section class="card" id="redeliver-failed"><h2>Redeliver failed deliveries</h2>
    <form method="post" action="${here}/redeliver" class="stack">${csrfField(ctx)}
      <label for="redeliver-since">Since <span class="muted">(a duration back from now such as 1h, 24h or 7d, or a time such as 2026-11-24T09:00:00Z)</span></label>
      <input id="redeliver-since" name="since" value="24h" list="redeliver-durations" required maxlength="64">
      <label for="redeliver-until">Until <span class="muted">(optional, the same forms; default now)</span></label>
      <input id="redeliver-until" name="until" list="redeliver-durations" maxlength="64">
      <datalist id="redeliver-durations"><option value="1h"><option value="6h"><option value="24h"><option value="3d"><option value="7d"><option value="30d"></datalist>
      <p class="muted">Every delivery that ended failed in that window and was not redelivered yet is sent again, with the same body and delivery id; at most ${MAX_BULK_REDELIVERIES.toLocaleString('en')} at a time.</p>
      <div class="actions"><button type="submit">Redeliver failed deliveries</button></div>
    </form></section>`;
}

/** A webhook's page (counts, recent deliveries unfolding to request and response), Ping and Redeliver. */
export function deliveryRoutes(router: Router, services: Services, hooks = '/:org/:repo/settings/hooks') {
  const { db } = services;
  const base = `${hooks}/:id`;

  router.get(base, (ctx) => webhookPage(ctx, services));
  router.get(`${base}/deliveries/:did`, (ctx) => deliveryPage(ctx, services));

  router.post(`${base}/ping`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { user, pageBase } = scope;
    const hook = await hookOf(services, scope, ctx.params.id); // the webhook must belong to this repository (or organization)
    const id = hook.id;
    const did = await sendPing(services, scope.owner, user, hook);
    // Its page says how it went once the receiver has answered: queued is all that is true yet.
    redirectWithFlash(ctx, `${pageBase}/${id}/deliveries/${did}`, 'Ping queued.');
  });

  // Resume a paused or disabled webhook at once (SPEC §5.5), as PATCH active: true does.
  router.post(`${base}/resume`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { id } = await hookOf(services, scope, ctx.params.id);
    const resumed = await resumeWebhook(services, id);
    const released = resumed?.released ?? 0;
    redirectWithFlash(
      ctx,
      `${scope.pageBase}/${id}`,
      `Webhook resumed; ${released === 1 ? '1 held delivery is' : `${released} held deliveries are`} being sent.`,
    );
  });

  router.post(`${base}/deliveries/:did/redeliver`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { pageBase } = scope;
    const { id } = await hookOf(services, scope, ctx.params.id);
    const original = await findDelivery(db, id, deliveryId(ctx.params.did));
    if (!original) throw new PageError(404, 'Not found', 'Delivery not found');
    const copy = await redeliver(services, original);
    if (copy === 'pending')
      return redirectWithFlash(
        ctx,
        `${pageBase}/${id}/deliveries/${original.id}`,
        'That delivery is still pending; redeliver it once it has finished.',
        'error',
      );
    // The new delivery's page shows its outcome when it comes.
    redirectWithFlash(ctx, `${pageBase}/${id}/deliveries/${copy.id}`, 'Redelivery queued.');
  });

  router.post(`${base}/redeliver`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { pageBase } = scope;
    const { id } = await hookOf(services, scope, ctx.params.id);
    const form = postedForm(ctx);
    const until = (form.get('until') ?? '').trim();
    const now = Date.now();
    const checked = checkRedeliveryTimes(form.get('since') ?? '', until === '' ? undefined : until, now);
    if (checked.problems) {
      const why = checked.problems.map((p) => `${p.path.slice(1) || 'form'} ${p.message}`).join('; ');
      return redirectWithFlash(ctx, `${pageBase}/${id}#redeliver-failed`, `Nothing redelivered: ${why}.`, 'error');
    }
    const { redelivered, remaining } = await redeliverFailed(services, id, redeliveryWindow(checked.input, now));
    const more = remaining > 0 ? ` ${remaining} more remain: submit again to send them.` : ' None remain.';
    redirectWithFlash(ctx, `${pageBase}/${id}`, `Redelivered ${redelivered} failed ${redelivered === 1 ? 'delivery' : 'deliveries'}.${more}`);
  });
}
