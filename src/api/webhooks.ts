import type Router from '@koa/router';
import type { Context } from 'koa';
import { notifyDeliveries, type Services } from '../services.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { jsonBody } from '../http/body.ts';
import { compile } from '../http/validate.ts';
import { notFound, validationFailed, type ErrorDetail } from '../http/errors.ts';
import { WEBHOOK_EVENTS, type Webhook } from '../webhooks/model.ts';
import { checkTarget, MAX_URL_LENGTH } from '../webhooks/target.ts';
import { validBranchFilter } from '../webhooks/match.ts';
import { createWebhook, deleteWebhook, findWebhook, listWebhooks, updateWebhook, type WebhookInput } from '../webhooks/store.ts';
import { lastDeliveries } from '../webhooks/history.ts';
import type { Delivery } from '../webhooks/deliveries.ts';
import type { Config } from '../config.ts';
import { idParam } from './params.ts';
import { iso } from './present.ts';

const fields = {
  url: { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH },
  // `application/json` is the label forms show for `json` (GitHub's own form posts either).
  content_type: { type: 'string', enum: ['json', 'application/json'] },
  secret: { type: 'string', minLength: 1, maxLength: 1024 },
  events: { type: 'array', minItems: 1, maxItems: WEBHOOK_EVENTS.length, items: { type: 'string', enum: WEBHOOK_EVENTS } },
  active: { type: 'boolean' },
  branch_filter: { type: ['string', 'null'], maxLength: 255 },
} as const;

const parseCreate = compile({ type: 'object', additionalProperties: false, required: ['url'], properties: fields } as const);
const parseUpdate = compile({ type: 'object', additionalProperties: false, properties: fields } as const);

/** The API form of a webhook (SPEC §5.1): never its secret. */
export function presentWebhook(config: Config, hook: Webhook, last: Delivery | undefined) {
  const base = `${config.baseUrl}/api/v1/webhooks/${hook.id}`;
  return {
    id: hook.id,
    url: hook.url,
    content_type: hook.content_type,
    events: hook.events,
    active: hook.active,
    branch_filter: hook.branch_filter,
    created_at: iso(hook.created_at),
    updated_at: iso(hook.updated_at),
    has_secret: true,
    last_delivery: last
      ? { id: last.id, result: last.status === 'success' ? 'Success' : last.status === 'failed' ? 'Failed' : null, status_code: last.status_code, timestamp: iso(last.last_attempt_at) }
      : null,
    deliveries_url: `${base}/deliveries`,
    ping_url: `${base}/ping`,
  };
}

/** Checks what the schema cannot (URL target, glob) and normalizes (URL, content type, events); throws one 422 naming every problem. */
async function checkInput(config: Config, input: Omit<WebhookInput, 'content_type'> & { content_type?: string }): Promise<WebhookInput> {
  const details: ErrorDetail[] = [];
  let url = input.url;
  if (url !== undefined) {
    const target = await checkTarget(config.webhookAllowedHosts, url);
    if (target.problem) details.push({ path: '/url', message: target.problem });
    url = target.url;
  }
  let branchFilter = input.branch_filter;
  if (branchFilter === '') branchFilter = null;
  if (typeof branchFilter === 'string' && !validBranchFilter(branchFilter)) details.push({ path: '/branch_filter', message: 'is not a valid glob' });
  if (details.length > 0) throw validationFailed(details);
  const events = input.events && (input.events.includes('*') ? ['*'] : [...new Set(input.events)]);
  const contentType = input.content_type === undefined ? undefined : ('json' as const);
  return { ...input, url, content_type: contentType, branch_filter: branchFilter, events };
}

/** The webhook of :id in the repository loaded by repoAccess, or 404. */
async function hookOfRepo(services: Services, ctx: Context): Promise<Webhook> {
  const hook = await findWebhook(services.db, idParam(ctx.params.id, 'Webhook not found'));
  if (!hook || hook.repository_id !== ctx.state.repo.id) throw notFound('Webhook not found');
  return hook;
}

/** Webhook CRUD under /repos/:org/:repo/webhooks, for organization owners (SPEC §5.2). */
export function webhookRoutes(router: Router, services: Services) {
  const { db, config } = services;
  const owner = repoAccess(db, 'admin');
  const present = async (hooks: Webhook[]) => {
    const last = await lastDeliveries(db, hooks.map((h) => h.id));
    return hooks.map((h) => presentWebhook(config, h, last.get(h.id)));
  };

  router.post('/repos/:org/:repo/webhooks', owner, jsonBody(), async (ctx) => {
    const input = await checkInput(config, parseCreate(ctx.request.body));
    const created = await createWebhook(db, config, ctx.state.repo, ctx.state.user, { ...input, url: input.url! });
    if (created.webhook.active) notifyDeliveries(services);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/webhooks/${created.webhook.id}`);
    // The only answer that ever carries a secret, and only one the server generated.
    ctx.body = { ...(await present([created.webhook]))[0], ...(input.secret === undefined ? { secret: created.secret } : {}) };
  });

  router.get('/repos/:org/:repo/webhooks', owner, async (ctx) => {
    ctx.body = await present(await listWebhooks(db, ctx.state.repo.id));
  });

  router.get('/repos/:org/:repo/webhooks/:id', owner, async (ctx) => {
    ctx.body = (await present([await hookOfRepo(services, ctx)]))[0];
  });

  router.patch('/repos/:org/:repo/webhooks/:id', owner, jsonBody(), async (ctx) => {
    const hook = await hookOfRepo(services, ctx);
    const input = await checkInput(config, parseUpdate(ctx.request.body ?? {}));
    const updated = await updateWebhook(db, config, hook.id, input);
    if (!updated) throw notFound('Webhook not found');
    ctx.body = (await present([updated]))[0];
  });

  router.delete('/repos/:org/:repo/webhooks/:id', owner, async (ctx) => {
    const hook = await hookOfRepo(services, ctx);
    await deleteWebhook(db, hook.id);
    ctx.status = 204;
  });
}
