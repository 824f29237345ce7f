import { sendPing } from '../webhooks/ping.ts';
import { attemptsOf, bodyOf, findDelivery, resultLabel, type Delivery } from '../webhooks/deliveries.ts';
import { countDeliveries, listDeliveries, MAX_BULK_REDELIVERIES, redeliver, redeliverFailed } from '../webhooks/history.ts';
import { REDELIVER_INPUT, redeliveryWindow, redeliveryWindowProblems } from '../webhooks/input.ts';
import { EVENT_TYPES } from '../events/types.ts';
import { conflict, notFound } from '../http/errors.ts';
import { iso } from './present.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, idParams, INT_OR_NULL, TEXT_OR_NULL, TIME, TIME_OR_NULL } from './schemas.ts';

// Ping and retry take no input; a body, if sent, must be an empty object.
const NoInput = { type: 'object', additionalProperties: false, properties: {} } as const;

const HistoryQuery = {
  type: 'object',
  properties: {
    status: {
      type: 'string',
      enum: ['success', 'failed', 'pending', 'held'],
      description: '`held`: pending deliveries held while the webhook is paused or disabled (no next attempt; SPEC §5.5).',
    },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
    cursor: { type: 'string', description: "From the previous page's `next_cursor`." },
  },
} as const;

const DeliverySchema = named('Delivery', {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'guid',
    'webhook_id',
    'event',
    'action',
    'status',
    'result',
    'status_code',
    'error',
    'attempts',
    'next_attempt_at',
    'timestamp',
    'duration_ms',
    'redelivery',
    'redelivery_of',
    'created_at',
    'url',
  ],
  properties: {
    id: ID,
    guid: { type: 'string', format: 'uuid', description: 'The `X-Service-Delivery` header: the same on every attempt and redelivery.' },
    webhook_id: ID,
    event: { type: 'string', enum: [...EVENT_TYPES, 'ping'] },
    action: TEXT_OR_NULL,
    status: { type: 'string', enum: ['success', 'failed', 'pending'] },
    result: { enum: ['Success', 'Failed', null] },
    status_code: INT_OR_NULL,
    error: TEXT_OR_NULL,
    attempts: { type: 'integer', minimum: 0 },
    next_attempt_at: TIME_OR_NULL,
    timestamp: { ...TIME_OR_NULL, description: 'When the last attempt was made.' },
    duration_ms: INT_OR_NULL,
    redelivery: { type: 'boolean' },
    redelivery_of: { type: ['integer', 'null'] },
    created_at: TIME,
    url: { type: 'string', format: 'uri' },
  },
} as const);

const HEADERS = { type: 'object', additionalProperties: { type: 'string' } } as const;

const DeliveryDetailSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...DeliverySchema.required, 'attempts_log', 'request', 'response'],
  properties: {
    ...DeliverySchema.properties,
    attempts_log: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['attempt', 'timestamp', 'status_code', 'error', 'duration_ms'],
        properties: { attempt: { type: 'integer', minimum: 1 }, timestamp: TIME, status_code: INT_OR_NULL, error: TEXT_OR_NULL, duration_ms: INT_OR_NULL },
      },
    },
    request: {
      type: 'object',
      additionalProperties: false,
      required: ['headers', 'body'],
      properties: {
        headers: { anyOf: [HEADERS, { type: 'null' }] },
        body: { ...TEXT_OR_NULL, description: 'The exact body sent (null once its event is gone).' },
      },
    },
    response: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['status', 'headers', 'body'],
          properties: { status: INT_OR_NULL, headers: { anyOf: [HEADERS, { type: 'null' }] }, body: TEXT_OR_NULL },
        },
        { type: 'null' },
      ],
    },
  },
} as const;

const DeliveryPageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['total', 'successful', 'failed', 'pending', 'deliveries', 'next_cursor'],
  properties: {
    total: { type: 'integer', minimum: 0 },
    successful: { type: 'integer', minimum: 0 },
    failed: { type: 'integer', minimum: 0 },
    pending: { type: 'integer', minimum: 0 },
    deliveries: { type: 'array', items: DeliverySchema },
    next_cursor: TEXT_OR_NULL,
  },
} as const;

const RedeliveredSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['redelivered', 'remaining'],
  properties: {
    redelivered: { type: 'integer', minimum: 0, description: `Deliveries sent again by this call (at most ${MAX_BULK_REDELIVERIES.toLocaleString('en')}).` },
    remaining: { type: 'integer', minimum: 0, description: 'Matching deliveries left for another call.' },
  },
} as const;

const DELIVERY_PARAMS = { type: 'object', required: ['id', 'delivery'], properties: { id: ID, delivery: ID } } as const;

/** The API form of a delivery (SPEC §5.3). */
export function presentDelivery(baseUrl: string, d: Delivery): Answer<typeof DeliverySchema> {
  return {
    id: d.id,
    guid: d.guid,
    webhook_id: d.webhook_id,
    event: d.event,
    action: d.action,
    status: d.status,
    result: resultLabel(d.status),
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

/** The delivery id a cursor stands for, or null for anything this API did not give. */
function cursorBefore(cursor: string): number | null {
  const m = /^d(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  return m && Buffer.from(`d${m[1]}`).toString('base64url') === cursor ? Number(m[1]) : null;
}

/** The cursor's problem, if any, for the same 422 as the schema's (a repeated parameter counts by its last value). */
function cursorProblems(raw: Record<string, string | string[] | undefined>) {
  const cursor = [raw.cursor ?? []].flat().at(-1);
  return cursor === undefined || cursorBefore(cursor) !== null ? [] : [{ path: '/cursor', message: 'is not a cursor this API gave' }];
}

const deliveryRoute = { tag: 'deliveries', access: 'webhook:admin', notFound: 'Delivery not found' } as const;

/** Ping, delivery history and manual redelivery under /webhooks/{id} (ids are global). */
export const deliveryRoutes: Route[] = [
  route({
    ...deliveryRoute,
    id: 'pingWebhook',
    method: 'post',
    path: '/webhooks/{id}/ping',
    summary: 'Send a ping delivery to a webhook',
    params: idParams('id'),
    body: NoInput,
    bodyOptional: true,
    bodyFirst: true,
    answers: { 202: DeliverySchema },
    handler: async (_input, ctx, services) => {
      const { db, config } = services;
      const id = await sendPing(services, ctx.state.repo ?? ctx.state.org, ctx.state.user, ctx.state.webhook);
      ctx.status = 202;
      ctx.body = presentDelivery(config.baseUrl, (await findDelivery(db, ctx.state.webhook.id, id))!);
    },
  }),
  route({
    ...deliveryRoute,
    id: 'listDeliveries',
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    summary: "A webhook's deliveries, newest first, with counts by status",
    params: idParams('id'),
    query: HistoryQuery,
    queryCheck: cursorProblems,
    answers: { 200: DeliveryPageSchema },
    handler: async ({ query }, ctx, { db, config }) => {
      const hookId = ctx.state.webhook.id;
      const before = query.cursor === undefined ? undefined : cursorBefore(query.cursor)!;
      const counts = await countDeliveries(db, hookId);
      const page = await listDeliveries(db, hookId, { status: query.status, limit: query.limit, before });
      ctx.body = {
        ...counts,
        deliveries: page.deliveries.map((d) => presentDelivery(config.baseUrl, d)),
        next_cursor: page.next === null ? null : Buffer.from(`d${page.next}`).toString('base64url'),
      } satisfies Answer<typeof DeliveryPageSchema>;
    },
  }),
  route({
    ...deliveryRoute,
    id: 'getDelivery',
    method: 'get',
    path: '/webhooks/{id}/deliveries/{delivery}',
    summary: 'A delivery with its attempts, the request sent and the last response',
    params: DELIVERY_PARAMS,
    answers: { 200: DeliveryDetailSchema },
    handler: async ({ params }, ctx, { db, config }) => {
      const delivery = await findDelivery(db, ctx.state.webhook.id, params.delivery);
      if (!delivery) throw notFound('Delivery not found');
      const attempts = await attemptsOf(db, delivery.id);
      const last = attempts[attempts.length - 1];
      ctx.body = {
        ...presentDelivery(config.baseUrl, delivery),
        attempts_log: attempts.map((a) => ({
          attempt: a.attempt,
          timestamp: iso(a.started_at),
          status_code: a.status_code,
          error: a.error,
          duration_ms: a.duration_ms,
        })),
        request: { headers: last?.request_headers ?? null, body: await bodyOf(db, delivery.id) },
        response: last ? { status: last.status_code, headers: last.response_headers, body: last.response_body } : null,
      } satisfies Answer<typeof DeliveryDetailSchema>;
    },
  }),
  route({
    ...deliveryRoute,
    id: 'redeliver',
    method: 'post',
    path: '/webhooks/{id}/deliveries/{delivery}/retry',
    summary: 'Send a finished delivery again, as a new delivery with the same guid',
    params: DELIVERY_PARAMS,
    body: NoInput,
    bodyOptional: true,
    bodyFirst: true,
    answers: { 202: DeliverySchema },
    errors: [409],
    headers: { 202: ['Location'] },
    handler: async ({ params }, ctx, services) => {
      const original = await findDelivery(services.db, ctx.state.webhook.id, params.delivery);
      if (!original) throw notFound('Delivery not found');
      const copy = await redeliver(services, original);
      if (copy === 'pending') throw conflict('The delivery is still pending; retry it once it has finished');
      ctx.status = 202;
      ctx.set('Location', `/api/v1/webhooks/${copy.webhook_id}/deliveries/${copy.id}`);
      ctx.body = presentDelivery(services.config.baseUrl, copy);
    },
  }),
  route({
    ...deliveryRoute,
    id: 'redeliverFailed',
    method: 'post',
    path: '/webhooks/{id}/deliveries/redeliver',
    summary: `Send again every failed delivery that finished in a window and was not redelivered yet (at most ${MAX_BULK_REDELIVERIES.toLocaleString('en')} per call)`,
    notFound: 'Webhook not found',
    params: idParams('id'),
    body: REDELIVER_INPUT,
    bodyCheck: redeliveryWindowProblems,
    answers: { 202: RedeliveredSchema },
    handler: async ({ body }, ctx, services) => {
      const outcome = await redeliverFailed(services, ctx.state.webhook.id, redeliveryWindow(body, Date.now()));
      ctx.status = 202;
      ctx.body = outcome satisfies Answer<typeof RedeliveredSchema>;
    },
  }),
];
