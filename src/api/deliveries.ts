import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { notifyDeliveries, type Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import { repositoryById } from '../domain/repos.ts';
import { accessTo } from '../domain/access.ts';
import { findWebhook } from '../webhooks/store.ts';
import { insertPing } from '../webhooks/ping.ts';
import { attemptsOf, bodyOf, findDelivery, type Delivery } from '../webhooks/deliveries.ts';
import { countDeliveries, listDeliveries, redeliver } from '../webhooks/history.ts';
import type { DeliveryStatus } from '../webhooks/model.ts';
import { conflict, forbidden, notFound, validationFailed, type ErrorDetail } from '../http/errors.ts';
import { jsonBody } from '../http/body.ts';
import { compile } from '../http/validate.ts';
import { idParam } from './params.ts';
import { iso } from './present.ts';

/** The API form of a delivery (SPEC §5.3). */
export function presentDelivery(baseUrl: string, d: Delivery) {
  return {
    id: d.id,
    guid: d.guid,
    webhook_id: d.webhook_id,
    event: d.event,
    action: d.action,
    status: d.status,
    result: d.status === 'success' ? 'Success' : d.status === 'failed' ? 'Failed' : null,
    status_code: d.status_code,
    error: d.error,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    timestamp: iso(d.last_attempt_at),
    duration_ms: d.duration_ms,
    redelivery: d.redelivery,
    redelivery_of: d.redelivery_of,
    created_at: iso(d.created_at),
    url: `${baseUrl}/api/v1/webhooks/${d.webhook_id}/deliveries/${d.id}`,
  };
}

/**
 * Loads :id as ctx.state.webhook with its repository; the caller must own the repository
 * (404 when they cannot see it, so a private repository's hooks are never revealed).
 */
function webhookAccess(db: Db) {
  return async function loadWebhook(ctx: Context, next: Next) {
    const id = idParam(ctx.params.id, 'Webhook not found');
    const hook = await findWebhook(db, id);
    const repo = hook && (await repositoryById(db, hook.repository_id));
    if (!hook || !repo) throw notFound('Webhook not found');
    const access = await accessTo(db, repo, ctx.state.user);
    if (!access.read) throw notFound('Webhook not found');
    if (!access.admin) throw forbidden('Only organization owners may manage webhooks');
    ctx.state.webhook = hook;
    ctx.state.repo = repo;
    await next();
  };
}

// Ping and retry take no input; a body, if sent, must be an empty object.
const parseNoInput = compile({ type: 'object', additionalProperties: false, properties: {} } as const);
const noInput = [jsonBody(), async (ctx: Context, next: Next) => {
  if (ctx.request.body !== undefined) parseNoInput(ctx.request.body);
  await next();
}];

const STATUSES: DeliveryStatus[] = ['success', 'failed', 'pending'];

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

/** Reads status, limit and cursor; every bad value is named in one 422. */
function listQuery(query: Record<string, string | string[] | undefined>) {
  const details: ErrorDetail[] = [];
  const status = one(query.status);
  if (status !== undefined && !STATUSES.includes(status as DeliveryStatus)) details.push({ path: '/status', message: 'must be success, failed or pending' });
  const limitText = one(query.limit);
  let limit = 30;
  if (limitText !== undefined) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : NaN;
    if (!(limit >= 1 && limit <= 100)) details.push({ path: '/limit', message: 'must be a whole number from 1 to 100' });
  }
  const cursor = one(query.cursor);
  let before: number | undefined;
  if (cursor !== undefined) {
    const m = /^d(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
    if (!m || Buffer.from(`d${m[1]}`).toString('base64url') !== cursor) details.push({ path: '/cursor', message: 'is not a cursor this API gave' });
    else before = Number(m[1]);
  }
  if (details.length > 0) throw validationFailed(details);
  return { status: status as DeliveryStatus | undefined, limit, before };
}

/** Ping, delivery history and manual redelivery under /webhooks/:id (ids are global). */
export function deliveryRoutes(router: Router, services: Services) {
  const { db, config } = services;

  router.post('/webhooks/:id/ping', webhookAccess(db), ...noInput, async (ctx) => {
    const id = await insertPing(db, config, ctx.state.repo, ctx.state.user, ctx.state.webhook);
    notifyDeliveries(services);
    ctx.status = 202;
    ctx.body = presentDelivery(config.baseUrl, (await findDelivery(db, ctx.state.webhook.id, id))!);
  });

  router.get('/webhooks/:id/deliveries', webhookAccess(db), async (ctx) => {
    const query = listQuery(ctx.query);
    const hookId = ctx.state.webhook.id;
    const counts = await countDeliveries(db, hookId);
    const page = await listDeliveries(db, hookId, query);
    ctx.body = {
      ...counts,
      deliveries: page.deliveries.map((d) => presentDelivery(config.baseUrl, d)),
      next_cursor: page.next === null ? null : Buffer.from(`d${page.next}`).toString('base64url'),
    };
  });

  router.get('/webhooks/:id/deliveries/:delivery', webhookAccess(db), async (ctx) => {
    const delivery = await findDelivery(db, ctx.state.webhook.id, idParam(ctx.params.delivery, 'Delivery not found'));
    if (!delivery) throw notFound('Delivery not found');
    const attempts = await attemptsOf(db, delivery.id);
    const last = attempts[attempts.length - 1];
    ctx.body = {
      ...presentDelivery(config.baseUrl, delivery),
      attempts_log: attempts.map((a) => ({ attempt: a.attempt, timestamp: iso(a.started_at), status_code: a.status_code, error: a.error, duration_ms: a.duration_ms })),
      request: { headers: last?.request_headers ?? null, body: await bodyOf(db, delivery.id) },
      response: last ? { status: last.status_code, headers: last.response_headers, body: last.response_body } : null,
    };
  });

  router.post('/webhooks/:id/deliveries/:delivery/retry', webhookAccess(db), ...noInput, async (ctx) => {
    const original = await findDelivery(db, ctx.state.webhook.id, idParam(ctx.params.delivery, 'Delivery not found'));
    if (!original) throw notFound('Delivery not found');
    const copy = await redeliver(db, original);
    if (copy === 'pending') throw conflict('The delivery is still pending; retry it once it has finished');
    notifyDeliveries(services);
    ctx.status = 202;
    ctx.set('Location', `/api/v1/webhooks/${copy.webhook_id}/deliveries/${copy.id}`);
    ctx.body = presentDelivery(config.baseUrl, copy);
  });
}
