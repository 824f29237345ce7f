import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import type { Db } from '../../db/connect.ts';
import type { Webhook } from '../../webhooks/model.ts';
import { createWebhook, currentCustomHeaders, deleteWebhook, findWebhook, listOrgWebhooks, listWebhooks, updateWebhook } from '../../webhooks/store.ts';
import type { WebhookOwner } from '../../webhooks/ping.ts';
import { findOrg, roleIn, type User } from '../../domain/accounts.ts';
import { checkWebhookInput, orgOnlyEventProblems, type WebhookInput } from '../../webhooks/input.ts';
import { WharfError } from '../../errors/wharfError.ts';
import { withLastDelivery } from '../../webhooks/listed.ts';
import type { Delivery } from '../../webhooks/deliveries.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, renderPage, type Crumb } from '../layout.ts';
import { breakable, timeTag } from '../format.ts';
import { shortState } from '../pages/delivery.ts';
import { repoHeader } from './repo.ts';
import {
  chosenEvents,
  EVENT_TYPES,
  fieldErrors,
  ORG_EVENT_TYPES,
  valuesFromForm,
  valuesFromRecord,
  webhookForm,
  type FieldErrors,
  type HookValues,
} from '../pages/webhookForm.ts';
import { readerFor, type SeenRepo } from '../reader.ts';
import { healthBadge } from '../pages/webhookHealth.ts';
import { requireUser } from '../user.ts';

/** A webhook as the pages show it (never its secret). */
export interface Hook {
  id: number;
  url: string;
  events: string[];
  active: boolean;
  branch_filter: string | null;
  /** The latest delivery, as it stands now (pending ones included). */
  last_delivery: Delivery | null;
  health: Webhook['health'];
  held: number;
}

/** The views of webhooks, each with its latest delivery. */
export async function hookViews(db: Db, hooks: Webhook[]): Promise<Hook[]> {
  return (await withLastDelivery(db, hooks)).map(({ hook, last, held }) => ({
    id: hook.id,
    url: hook.url,
    events: hook.events,
    active: hook.active,
    branch_filter: hook.branch_filter,
    last_delivery: last ?? null,
    health: hook.health,
    held,
  }));
}

/**
 * Whose webhooks a page shows: a repository's (its organization's owners only, as the
 * API's webhook routes) or an organization's (its owners; SPEC §5.4), with the pages'
 * path, crumbs and header, for every page of this file and deliveries.ts.
 */
export interface HookScope {
  user: User;
  owner: WebhookOwner;
  /** `org/repo` or `org`, for titles. */
  label: string;
  pageBase: string;
  crumbs: Crumb[];
  header: SafeHtml;
  /** An organization's webhooks: the `repository` and `import` events are offered. */
  ofOrg: boolean;
  repo?: SeenRepo;
}

/** The scope of a page: the organization's under /-/orgs/:org/settings/hooks, else the repository's. */
export async function hookContext(ctx: Context, services: Services): Promise<HookScope> {
  const user = requireUser(ctx);
  if (ctx.params.repo === undefined) {
    const org = await findOrg(services.db, ctx.params.org);
    const role = org && (await roleIn(services.db, org.id, user));
    if (!org || !role) throw new PageError(404, 'Not found', `Organization ${ctx.params.org} does not exist, or you may not see it.`);
    if (role !== 'owner') throw new PageError(403, 'Forbidden', 'Only organization owners may manage webhooks.');
    const pageBase = `/-/orgs/${org.name}/settings/hooks`;
    return {
      user,
      owner: org,
      label: org.name,
      pageBase,
      crumbs: [
        { label: org.name, href: `/${org.name}` },
        { label: 'Webhooks', href: pageBase },
      ],
      header: html`<div class="heading"><h1>${org.name}</h1><span class="muted">Organization settings</span></div>`,
      ofOrg: true,
    };
  }
  const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'admin');
  const pageBase = `/${repo.org}/${repo.name}/settings/hooks`;
  const crumbs: Crumb[] = [
    { label: repo.org, href: `/${repo.org}` },
    { label: repo.name, href: `/${repo.org}/${repo.name}` },
    { label: 'Webhooks', href: pageBase },
  ];
  return { user, owner: repo.repository, label: repo.full_name, pageBase, crumbs, header: repoHeader(repo, true, 'settings'), ofOrg: false, repo };
}

/** A webhook id from the path; anything but a positive integer is a 404 page. */
export function hookId(value: string | undefined): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw new PageError(404, 'Not found', 'No such webhook.');
  return Number(value);
}

/** The webhook of the path in this scope, or a 404 page (a webhook of another repository or organization is not found either). */
export async function hookOf(services: Services, scope: HookScope, value: string | undefined): Promise<Webhook> {
  const hook = await findWebhook(services.db, hookId(value));
  const mine = hook && (scope.ofOrg ? hook.org_id === scope.owner.id : hook.repository_id === scope.owner.id);
  if (!hook || !mine) throw new PageError(404, 'Not found', 'Webhook not found');
  return hook;
}

/** The last delivery as it stands: `Delivered`, `Failed 500`, `Retrying (attempt 2 of 4)` or `Queued`, and when. */
function lastResult(hook: Hook, scheduleLength: number) {
  const last = hook.last_delivery;
  if (!last) return html`<span class="muted">No deliveries yet</span>`;
  const state = shortState(last, scheduleLength);
  return html`<span class="result ${state.kind}">${state.label}</span> <span class="when">${timeTag(last.last_attempt_at ?? last.created_at)}</span>`;
}

function eventsLabel(events: string[]): string {
  return events.includes('*') ? 'everything' : events.join(', ');
}

/** Checks the form's own choice, then the webhook's fields as the API checks them; the input for the store, or errors by field. */
async function toInput(
  services: Services,
  values: HookValues,
  editing: boolean,
  ofOrg: boolean,
  current: Record<string, string> = {},
): Promise<{ input?: WebhookInput; errors?: FieldErrors }> {
  const events = chosenEvents(values);
  if (events.length === 0) return { errors: { events: ['Choose at least one event.'] } };
  if (!ofOrg && orgOnlyEventProblems(events).length > 0) return { errors: { events: ['Repository and import events are for organization webhooks only.'] } };
  const headers = formHeaders(values, current);
  if (headers.errors) return { errors: headers.errors };
  const body: Record<string, unknown> = { url: values.url, content_type: 'json', events, active: values.active, header_style: values.headerStyle };
  // On edit the form holds the whole set, so it replaces it; on create only when there is one.
  if (editing || Object.keys(headers.set).length > 0) body.headers = headers.set;
  if (values.secret !== '') body.secret = values.secret;
  if (values.branchFilter !== '') body.branch_filter = values.branchFilter;
  else if (editing) body.branch_filter = null;
  if (values.maxRate !== '') body.max_rate = /^\d{1,7}$/.test(values.maxRate) ? Number(values.maxRate) : values.maxRate;
  else if (editing) body.max_rate = null;
  if (values.maxConcurrency !== '') body.max_concurrency = /^\d{1,7}$/.test(values.maxConcurrency) ? Number(values.maxConcurrency) : values.maxConcurrency;
  else if (editing) body.max_concurrency = null;
  const checked = await checkWebhookInput(services.config, body);
  return checked.problems ? { errors: fieldErrors(checked.problems, 'Validation failed') } : { input: checked.input };
}

/**
 * The custom headers a form's rows stand for: removed rows dropped, a blank value on a
 * header the webhook has (`current`, opened) kept. The checker judges names and values.
 */
function formHeaders(values: HookValues, current: Record<string, string>): { set: Record<string, string>; errors?: FieldErrors } {
  const set: Record<string, string> = {};
  for (const row of values.headers) {
    if (row.remove) continue;
    if (row.name === '') return { set, errors: { headers: ['A header with a value needs a name.'] } };
    if (Object.hasOwn(set, row.name)) return { set, errors: { headers: [`${row.name} is named twice.`] } };
    set[row.name] = row.value === '' && Object.hasOwn(current, row.name) ? current[row.name] : row.value;
  }
  return { set };
}

/** A refusal of the store (a duplicate URL, too many webhooks) as errors by field. */
function refusedErrors(err: unknown): FieldErrors {
  if (err instanceof WharfError && err.code === 'validation_failed') return fieldErrors(err.details, err.message);
  throw err;
}

/** The list page: every webhook of the repository, its events, status and last delivery. */
async function listPage(ctx: Context, services: Services) {
  const { db } = services;
  const scope = await hookContext(ctx, services);
  const { pageBase, crumbs } = scope;
  const hooks = await hookViews(db, scope.ofOrg ? await listOrgWebhooks(db, scope.owner.id) : await listWebhooks(db, scope.owner.id));
  const rows = hooks.map(
    (
      h,
    ) => html`<tr><td data-label="Payload URL"><a href="${pageBase}/${h.id}" class="strong url">${breakable(h.url)}</a>${h.branch_filter ? html`<div class="muted">branches: <code>${h.branch_filter}</code></div>` : ''}</td>
    <td data-label="Events">${eventsLabel(h.events)}</td><td data-label="Status">${h.health.state !== 'healthy' ? healthBadge(h) : h.active ? html`<span class="result ok">Active</span>` : html`<span class="result wait">Inactive</span>`}</td><td data-label="Last delivery">${lastResult(h, services.config.webhookRetrySchedule.length)}</td>
    <td class="row-actions"><a href="${pageBase}/${h.id}/edit" aria-label="Edit ${h.url}">Edit</a> <a href="${pageBase}/${h.id}/delete" class="danger" aria-label="Delete ${h.url}">Delete</a></td></tr>`,
  );
  const table = hooks.length
    ? html`<table class="table stacking"><thead><tr><th>Payload URL</th><th>Events</th><th>Status</th><th>Last delivery</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">No webhooks yet. Webhooks send a signed POST to a URL of yours when something happens in this ${scope.ofOrg ? 'organization or any of its repositories' : 'repository'}.</p>`;
  renderPage(
    ctx,
    { title: `Webhooks · ${scope.label}`, crumbs: crumbs.slice(0, -1).concat({ label: 'Webhooks' }) },
    html`${scope.header}<div class="heading"><h2>Webhooks</h2><a class="button primary" href="${pageBase}/new">Add webhook</a></div><section class="card">${table}</section>`,
  );
}

/** The add or edit form, with the errors of a refused submission. */
function formPage(ctx: Context, scope: HookScope, action: string, values: HookValues, errors: FieldErrors, editing: boolean) {
  renderPage(
    ctx,
    {
      title: `${editing ? 'Edit' : 'Add'} webhook · ${scope.label}`,
      crumbs: [...scope.crumbs, { label: editing ? 'Edit' : 'Add' }],
      status: Object.keys(errors).length ? 422 : 200,
    },
    html`${scope.header}<section class="card narrow"><h2>${editing ? 'Edit webhook' : 'Add webhook'}</h2>${webhookForm(
      ctx,
      action,
      values,
      errors,
      editing,
      scope.ofOrg ? [...EVENT_TYPES, ...ORG_EVENT_TYPES] : EVENT_TYPES,
    )}</section>`,
  );
}

/** Adds a webhook from the form; a secret Wharf generated is shown on this page only. */
async function addFromForm(ctx: Context, services: Services) {
  const scope = await hookContext(ctx, services);
  const { user, pageBase, crumbs } = scope;
  const values = valuesFromForm(postedForm(ctx));
  const { input, errors } = await toInput(services, values, false, scope.ofOrg);
  if (!input) return formPage(ctx, scope, pageBase, values, errors!, false);
  let created: { webhook: Webhook; secret: string };
  try {
    created = await createWebhook(services, scope.owner, user, { ...input, url: input.url! });
  } catch (err) {
    return formPage(ctx, scope, pageBase, values, refusedErrors(err), false);
  }
  const id = created.webhook.id;
  if (values.secret !== '') return redirectWithFlash(ctx, `${pageBase}/${id}`, 'Webhook added. A ping was queued to check it: its result shows below.');
  // A generated secret exists only in this answer: show it now, never again.
  renderPage(
    ctx,
    { title: 'Webhook added', crumbs: [...crumbs, { label: 'Added' }], status: 201 },
    html`<section class="card narrow"><h1>Webhook added</h1><p>Wharf generated this secret. Copy it now: it will not be shown again.</p>
    <label for="new-secret" class="strong">Secret</label>
    <div class="copy"><input id="new-secret" readonly value="${created.secret}" class="secret"><button type="button" class="js-only" data-copy="#new-secret">Copy</button></div>
    <p>Receivers verify <code>X-Service-Signature</code> (HMAC-SHA256 of the body with this secret) or the Standard Webhooks headers.</p>
    <p><a class="button primary" href="${pageBase}/${id}">Go to the webhook</a></p></section>`,
  );
}

/** Repository → Settings → Webhooks (and, under ORG_HOOKS, Organization → Settings → Webhooks): list, add, edit, delete with a confirmation page. */
export function webhookRoutes(router: Router, services: Services, base = '/:org/:repo/settings/hooks') {
  const { db } = services;

  router.get(base, (ctx) => listPage(ctx, services));

  router.get(`${base}/new`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    formPage(
      ctx,
      scope,
      scope.pageBase,
      {
        url: '',
        secret: '',
        mode: 'push',
        events: ['push'],
        active: true,
        branchFilter: '',
        headerStyle: 'wharf',
        maxRate: '',
        maxConcurrency: '',
        headers: [],
      },
      {},
      false,
    );
  });

  router.post(base, (ctx) => addFromForm(ctx, services));

  router.get(`${base}/:id/edit`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const hook = await hookOf(services, scope, ctx.params.id);
    formPage(ctx, scope, `${scope.pageBase}/${hook.id}`, valuesFromRecord(hook), {}, true);
  });

  router.post(`${base}/:id`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { pageBase } = scope;
    const { id } = await hookOf(services, scope, ctx.params.id);
    const values = valuesFromForm(postedForm(ctx));
    const { input, errors } = await toInput(services, values, true, scope.ofOrg, await currentCustomHeaders(db, id));
    if (!input) return formPage(ctx, scope, `${pageBase}/${id}`, values, errors!, true);
    try {
      if (!(await updateWebhook(services, id, input))) throw new PageError(404, 'Not found', 'Webhook not found');
    } catch (err) {
      return formPage(ctx, scope, `${pageBase}/${id}`, values, refusedErrors(err), true);
    }
    redirectWithFlash(ctx, `${pageBase}/${id}`, 'Webhook updated.');
  });

  router.get(`${base}/:id/delete`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    const { pageBase, crumbs } = scope;
    const hook = await hookOf(services, scope, ctx.params.id);
    renderPage(
      ctx,
      { title: 'Delete webhook', crumbs: [...crumbs, { label: 'Delete' }] },
      html`<section class="card narrow danger-zone"><h1>Delete this webhook?</h1><p>Deliveries to <strong class="url">${hook.url}</strong> stop, and pending ones are cancelled. This cannot be undone.</p>
      <form method="post" action="${pageBase}/${hook.id}/delete" class="actions">${csrfField(ctx)}<button type="submit" class="danger">Yes, delete webhook</button><a class="button" href="${pageBase}">Cancel</a></form></section>`,
    );
  });

  router.post(`${base}/:id/delete`, async (ctx) => {
    const scope = await hookContext(ctx, services);
    await deleteWebhook(db, (await hookOf(services, scope, ctx.params.id)).id);
    const { pageBase } = scope;
    redirectWithFlash(ctx, pageBase, 'Webhook deleted.');
  });
}

/** Where an organization's webhook pages live (SPEC §5.4): Organization → Settings → Webhooks. */
export const ORG_HOOKS = '/-/orgs/:org/settings/hooks';
