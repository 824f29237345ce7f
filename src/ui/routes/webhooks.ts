import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { ApiError, seg, type ApiClient } from '../apiClient.ts';
import { redirectWithFlash } from '../context.ts';
import { PageError, requireApi } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage, type Crumb } from '../layout.ts';
import { timeTag } from '../format.ts';
import { repoHeader } from './repo.ts';
import { chosenEvents, fieldErrors, valuesFromForm, valuesFromRecord, webhookForm, type FieldErrors, type HookValues } from '../pages/webhookForm.ts';
import type { RepoRecord } from '../reader.ts';

/** A webhook record (SPEC §5.1). */
export interface Hook {
  id: number;
  url: string;
  events: string[];
  active: boolean;
  branch_filter: string | null;
  last_delivery: { id: number; result: string | null; status_code: number | null; timestamp: string | null } | null;
  secret?: string;
}

/** The repository, its API path and its webhooks' page path, for every page of this file. */
export async function hookContext(ctx: Context) {
  const api = requireApi(ctx);
  const { org, repo: name } = ctx.params;
  const apiBase = `/api/v1/repos/${seg(org)}/${seg(name)}`;
  const repo: RepoRecord = await api.get(apiBase);
  const pageBase = `/${repo.owner.login}/${repo.name}/settings/hooks`;
  const crumbs: Crumb[] = [{ label: repo.owner.login, href: `/${repo.owner.login}` }, { label: repo.name, href: `/${repo.owner.login}/${repo.name}` }, { label: 'Webhooks', href: pageBase }];
  return { api, repo, apiBase: `${apiBase}/webhooks`, pageBase, crumbs };
}

/** A webhook id from the path; anything but a positive integer is a 404 page. */
export function hookId(value: string | undefined): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw new PageError(404, 'Not found', 'No such webhook.');
  return Number(value);
}

/** Reads a webhook of this repository; a server without the webhooks API shows a page saying so. */
export async function getHooks<T>(api: ApiClient, path: string): Promise<T> {
  try {
    return await api.get(path);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404 && /\/webhooks$/.test(path)) throw new PageError(404, 'Webhooks unavailable', 'This server does not offer webhooks.');
    throw err;
  }
}

function lastResult(hook: Hook) {
  const last = hook.last_delivery;
  if (!last) return html`<span class="muted">No deliveries yet</span>`;
  const label = last.result === 'Success' ? 'Success' : last.result === 'Failed' ? `Failed${last.status_code ? ` ${last.status_code}` : ''}` : 'Pending';
  const kind = last.result === 'Success' ? 'ok' : last.result === 'Failed' ? 'bad' : 'wait';
  return html`<span class="result ${kind}">${label}</span> ${timeTag(last.timestamp)}`;
}

function eventsLabel(events: string[]): string {
  return events.includes('*') ? 'everything' : events.join(', ');
}

/** Validates what the API cannot know (the form's own choice), then builds the API body. */
function toBody(values: HookValues, editing: boolean): { body?: Record<string, unknown>; errors?: FieldErrors } {
  const events = chosenEvents(values);
  if (events.length === 0) return { errors: { events: ['Choose at least one event.'] } };
  const body: Record<string, unknown> = { url: values.url, content_type: 'json', events, active: values.active };
  if (values.secret !== '') body.secret = values.secret;
  if (values.branchFilter !== '') body.branch_filter = values.branchFilter;
  else if (editing) body.branch_filter = null;
  return { body };
}

/** Repository → Settings → Webhooks: list, add, edit, delete with a confirmation page. */
export function webhookRoutes(router: Router, _services: Services) {
  const base = '/:org/:repo/settings/hooks';

  router.get(base, async (ctx) => {
    const { api, repo, apiBase, pageBase, crumbs } = await hookContext(ctx);
    const hooks = await getHooks<Hook[]>(api, apiBase);
    const rows = hooks.map(
      (h) => html`<tr><td><a href="${pageBase}/${h.id}" class="strong url">${h.url}</a>${h.branch_filter ? html`<div class="muted">branches: <code>${h.branch_filter}</code></div>` : ''}</td>
      <td>${eventsLabel(h.events)}</td><td>${h.active ? html`<span class="result ok">Active</span>` : html`<span class="result wait">Inactive</span>`}</td><td>${lastResult(h)}</td>
      <td class="row-actions"><a href="${pageBase}/${h.id}/edit">Edit</a> <a href="${pageBase}/${h.id}/delete" class="danger">Delete</a></td></tr>`,
    );
    const table = hooks.length
      ? html`<table class="table"><thead><tr><th>Payload URL</th><th>Events</th><th>Status</th><th>Last delivery</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`
      : html`<p class="empty">No webhooks yet. Webhooks send a signed POST to a URL of yours when something happens in this repository.</p>`;
    renderPage(
      ctx,
      { title: `Webhooks · ${repo.full_name}`, crumbs: crumbs.slice(0, 2).concat({ label: 'Webhooks' }) },
      html`${repoHeader(repo, true, 'settings')}<div class="heading"><h2>Webhooks</h2><a class="button primary" href="${pageBase}/new">Add webhook</a></div><section class="card">${table}</section>`,
    );
  });

  const formPage = (ctx: Context, repo: RepoRecord, crumbs: Crumb[], action: string, values: HookValues, errors: FieldErrors, editing: boolean) =>
    renderPage(
      ctx,
      { title: `${editing ? 'Edit' : 'Add'} webhook · ${repo.full_name}`, crumbs: [...crumbs, { label: editing ? 'Edit' : 'Add' }], status: Object.keys(errors).length ? 422 : 200 },
      html`${repoHeader(repo, true, 'settings')}<section class="card narrow"><h2>${editing ? 'Edit webhook' : 'Add webhook'}</h2>${webhookForm(ctx, action, values, errors, editing)}</section>`,
    );

  router.get(`${base}/new`, async (ctx) => {
    const { repo, pageBase, crumbs } = await hookContext(ctx);
    formPage(ctx, repo, crumbs, pageBase, { url: '', secret: '', mode: 'push', events: ['push'], active: true, branchFilter: '' }, {}, false);
  });

  router.post(base, async (ctx) => {
    const { api, repo, apiBase, pageBase, crumbs } = await hookContext(ctx);
    const values = valuesFromForm(ctx.state.form);
    const { body, errors } = toBody(values, false);
    if (!body) return formPage(ctx, repo, crumbs, pageBase, values, errors!, false);
    let created: Hook;
    try {
      created = await api.post(apiBase, body);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 422 || err.status === 409)) return formPage(ctx, repo, crumbs, pageBase, values, fieldErrors(err.details, err.message), false);
      throw err;
    }
    if (values.secret !== '' || !created.secret) return redirectWithFlash(ctx, `${pageBase}/${created.id}`, 'Webhook added. A ping was sent to check it.');
    // A generated secret exists only in this answer: show it now, never again.
    renderPage(
      ctx,
      { title: 'Webhook added', crumbs: [...crumbs, { label: 'Added' }], status: 201 },
      html`<section class="card narrow"><h1>Webhook added</h1><p>Wharf generated this secret. Copy it now: it will not be shown again.</p>
      <div class="copy"><input id="new-secret" readonly value="${created.secret}" class="secret"><button type="button" class="js-only" data-copy="#new-secret">Copy</button></div>
      <p>Receivers verify <code>X-Service-Signature</code> (HMAC-SHA256 of the body with this secret) or the Standard Webhooks headers.</p>
      <p><a class="button primary" href="${pageBase}/${created.id}">Go to the webhook</a></p></section>`,
    );
  });

  router.get(`${base}/:id/edit`, async (ctx) => {
    const { api, repo, apiBase, pageBase, crumbs } = await hookContext(ctx);
    const hook: Hook = await api.get(`${apiBase}/${hookId(ctx.params.id)}`);
    formPage(ctx, repo, crumbs, `${pageBase}/${hook.id}`, valuesFromRecord(hook), {}, true);
  });

  router.post(`${base}/:id`, async (ctx) => {
    const { api, repo, apiBase, pageBase, crumbs } = await hookContext(ctx);
    const id = hookId(ctx.params.id);
    const values = valuesFromForm(ctx.state.form);
    const { body, errors } = toBody(values, true);
    if (!body) return formPage(ctx, repo, crumbs, `${pageBase}/${id}`, values, errors!, true);
    try {
      await api.patch(`${apiBase}/${id}`, body);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 422 || err.status === 409)) return formPage(ctx, repo, crumbs, `${pageBase}/${id}`, values, fieldErrors(err.details, err.message), true);
      throw err;
    }
    redirectWithFlash(ctx, `${pageBase}/${id}`, 'Webhook updated.');
  });

  router.get(`${base}/:id/delete`, async (ctx) => {
    const { api, repo, apiBase, pageBase, crumbs } = await hookContext(ctx);
    const hook: Hook = await api.get(`${apiBase}/${hookId(ctx.params.id)}`);
    renderPage(
      ctx,
      { title: 'Delete webhook', crumbs: [...crumbs, { label: 'Delete' }] },
      html`<section class="card narrow danger-zone"><h1>Delete this webhook?</h1><p>Deliveries to <strong class="url">${hook.url}</strong> stop, and pending ones are cancelled. This cannot be undone.</p>
      <form method="post" action="${pageBase}/${hook.id}/delete" class="actions">${csrfField(ctx)}<button type="submit" class="danger">Yes, delete webhook</button><a class="button" href="${pageBase}">Cancel</a></form></section>`,
    );
  });

  router.post(`${base}/:id/delete`, async (ctx) => {
    const { api, apiBase, pageBase } = await hookContext(ctx);
    await api.delete(`${apiBase}/${hookId(ctx.params.id)}`);
    redirectWithFlash(ctx, pageBase, 'Webhook deleted.');
  });
}
