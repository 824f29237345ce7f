import type { Context } from 'koa';
import type Router from '@koa/router';
import { notifyDeliveries, type Services } from '../../services.ts';
import type { Db } from '../../db/connect.ts';
import { insertPing } from '../../webhooks/ping.ts';
import { heldCounts, resumeWebhook } from '../../webhooks/health.ts';
import { healthBanner } from '../pages/health.ts';
import { attemptsOf, bodyOf, findDelivery, resultLabel, type Delivery as DeliveryRow } from '../../webhooks/deliveries.ts';
import { countDeliveries, listDeliveries, MAX_BULK_REDELIVERIES, redeliver, redeliverFailed } from '../../webhooks/history.ts';
import { checkRedeliveryTimes, redeliveryWindow } from '../../webhooks/input.ts';
import type { DeliveryStatus } from '../../webhooks/model.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { deliveryItem, type Delivery } from '../pages/delivery.ts';
import { hookContext, hookOf } from './webhooks.ts';

const PAGE_SIZE = 20;
const STATUSES: DeliveryStatus[] = ['success', 'failed', 'pending'];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A delivery as the page shows it, unfolded: its attempts, the request it sends and the last response. */
async function deliveryView(db: Db, d: DeliveryRow): Promise<Delivery> {
  const [attempts, body] = await Promise.all([attemptsOf(db, d.id), bodyOf(db, d.id)]);
  const last = attempts[attempts.length - 1];
  return {
    id: d.id,
    guid: d.guid,
    event: d.event,
    action: d.action,
    status: d.status,
    result: resultLabel(d.status),
    status_code: d.status_code,
    error: d.error,
    attempts: d.attempts,
    timestamp: iso(d.last_attempt_at),
    duration_ms: d.duration_ms,
    redelivery: d.redelivery,
    created_at: iso(d.created_at)!,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    attempts_log: attempts.map((a) => ({ timestamp: iso(a.started_at) ?? undefined, status_code: a.status_code, error: a.error, duration_ms: a.duration_ms })),
    request: { headers: last?.request_headers ?? null, body },
    response: last ? { status: last.status_code, headers: last.response_headers, body: last.response_body } : null,
  };
}

/** The id a page cursor stands for (the same cursors the delivery history API gives), or a 422 page. */
function cursorId(cursor: string): number {
  const m = /^d(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m || Buffer.from(`d${m[1]}`).toString('base64url') !== cursor)
    throw new PageError(422, 'Not accepted', 'Validation failed', [{ path: '/cursor', message: 'is not a cursor this API gave' }]);
  return Number(m[1]);
}

/** A webhook's page: its counts and recent deliveries (filtered by result, paged), each unfolding to request, response and attempts. */
async function webhookPage(ctx: Context, services: Services) {
  const { db } = services;
  const scope = await hookContext(ctx, services);
  const { pageBase, crumbs } = scope;
  const hook = await hookOf(services, scope, ctx.params.id);
  const id = hook.id;
  const status =
    typeof ctx.query.status === 'string' && STATUSES.includes(ctx.query.status as DeliveryStatus) ? (ctx.query.status as DeliveryStatus) : undefined;
  const before = typeof ctx.query.cursor === 'string' && ctx.query.cursor.length < 200 ? cursorId(ctx.query.cursor) : undefined;
  const [counts, found] = await Promise.all([countDeliveries(db, id), listDeliveries(db, id, { status, limit: PAGE_SIZE, before })]);
  const page = { ...counts, next_cursor: found.next === null ? null : Buffer.from(`d${found.next}`).toString('base64url') };
  // Each entry unfolds to its request, response and attempts.
  const full = await Promise.all(found.deliveries.map((d) => deliveryView(db, d)));
  const here = `${pageBase}/${id}`;
  const filter = (label: string, value?: string) =>
    html`<a href="${value ? `${here}?status=${value}` : here}" ${status === value ? html`aria-current="page"` : ''}>${label}</a>`;
  const list = full.length
    ? html`<ul class="deliveries">${full.map((d) => deliveryItem(ctx, d, `${here}/deliveries/${d.id}/redeliver`))}</ul>`
    : html`<p class="empty">No deliveries${status ? ' with this result' : ''} yet.</p>`;
  const older = page.next_cursor
    ? html`<p><a class="button" href="${here}?${new URLSearchParams({ ...(status ? { status } : {}), cursor: page.next_cursor }).toString()}">Older deliveries</a></p>`
    : '';
  const pending = full.some((d) => d.status === 'pending');
  renderPage(
    ctx,
    // While something is pending the page reloads itself: with a script (which waits while a delivery is unfolded), or by refresh without one.
    {
      title: `Webhook ${hook.url}`,
      crumbs: [...crumbs, { label: `#${hook.id}` }],
      head: pending ? html`<noscript><meta http-equiv="refresh" content="3"></noscript>` : undefined,
    },
    html`<div class="heading"><h1 class="url">${hook.url} ${hook.active ? html`<span class="result ok">Active</span>` : html`<span class="result wait">Inactive</span>`}</h1></div>
    ${healthBanner(ctx, { health: hook.health, held: (await heldCounts(db, [id])).get(id) ?? 0 }, `${here}/resume`)}
    <p class="muted">Events: ${hook.events.includes('*') ? 'everything' : hook.events.join(', ')}${hook.branch_filter ? html` · branches <code>${hook.branch_filter}</code>` : ''}${hook.header_style === 'github' ? html` · GitHub's header names too` : ''}${hook.header_names.length ? html` · custom headers ${hook.header_names.map((n, i) => html`${i ? ', ' : ''}<code>${n}</code>`)}` : ''}</p>
    <div class="actions">
      <form method="post" action="${here}/ping" class="inline">${csrfField(ctx)}<button type="submit" class="primary">Ping</button></form>
      <a class="button" href="${here}/edit">Edit</a><a class="button danger" href="${here}/delete">Delete</a>
    </div>
    <dl class="counts"><div><dt>Total</dt><dd>${page.total}</dd></div><div class="ok"><dt>Successful</dt><dd>${page.successful}</dd></div><div class="bad"><dt>Failed</dt><dd>${page.failed}</dd></div>${page.pending ? html`<div class="wait"><dt>Pending</dt><dd>${page.pending}</dd></div>` : ''}</dl>
    <section class="card"><div class="heading"><h2>Recent deliveries</h2><nav class="filters">${filter('All')}${filter('Successful', 'success')}${filter('Failed', 'failed')}${filter('Pending', 'pending')}</nav></div>
    ${list}${older}${pending ? html`<p class="muted" data-reload-after="3000">Pending deliveries: this page refreshes until they finish.</p>` : ''}</section>
    ${bulkRedeliverForm(ctx, here)}`,
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
  const { db, config } = services;
  const base = `${hooks}/:id`;

  router.get(base, (ctx) => webhookPage(ctx, services));

  router.post(`${base}/ping`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { user, pageBase } = scope;
    const hook = await hookOf(services, scope, ctx.params.id); // the webhook must belong to this repository (or organization)
    const id = hook.id;
    await insertPing(db, config, scope.owner, user, hook);
    notifyDeliveries(services);
    redirectWithFlash(ctx, `${pageBase}/${id}`, 'Ping sent.');
  });

  // Resume a paused or disabled webhook at once (SPEC §5.5), as PATCH active: true does.
  router.post(`${base}/resume`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { id } = await hookOf(services, scope, ctx.params.id);
    const resumed = await resumeWebhook(db, id, services.log);
    notifyDeliveries(services);
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
    const did = ctx.params.did;
    if (!/^[1-9]\d{0,15}$/.test(did)) throw new PageError(404, 'Not found', 'No such delivery.');
    const original = await findDelivery(db, id, Number(did));
    if (!original) throw new PageError(404, 'Not found', 'Delivery not found');
    if ((await redeliver(db, original)) === 'pending')
      return redirectWithFlash(ctx, `${pageBase}/${id}`, 'That delivery is still pending; redeliver it once it has finished.', 'error');
    notifyDeliveries(services);
    redirectWithFlash(ctx, `${pageBase}/${id}`, 'Redelivery queued.');
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
    const { redelivered, remaining } = await redeliverFailed(db, id, redeliveryWindow(checked.input, now));
    if (redelivered > 0) notifyDeliveries(services);
    const more = remaining > 0 ? ` ${remaining} more remain: submit again to send them.` : ' None remain.';
    redirectWithFlash(ctx, `${pageBase}/${id}`, `Redelivered ${redelivered} failed ${redelivered === 1 ? 'delivery' : 'deliveries'}.${more}`);
  });
}
