import type { RouteContext } from './context.ts';
import type { Services } from '../services.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import { HEADER_STYLES, HEALTH_STATES, WEBHOOK_EVENTS, type Webhook } from '../webhooks/model.ts';
import { createWebhook, deleteWebhook, findWebhook, listWebhooks, updateWebhook } from '../webhooks/store.ts';
import { checkWebhookInput, orgOnlyEventProblems, WEBHOOK_CREATE, WEBHOOK_UPDATE } from '../webhooks/input.ts';
import { withLastDelivery } from '../webhooks/listed.ts';
import { MASK, maskedHeaders } from '../webhooks/headers.ts';
import { resultLabel, type Delivery } from '../webhooks/deliveries.ts';
import type { Config } from '../config.ts';
import { iso } from './present.ts';
import { named, route, type Route } from './route.ts';
import { ID, INT_OR_NULL, listOf, repoParams, TIME, TIME_OR_NULL } from './schemas.ts';

const webhookProperties = {
  id: ID,
  url: { type: 'string' },
  content_type: { type: 'string', const: 'json' },
  events: { type: 'array', items: { type: 'string', enum: WEBHOOK_EVENTS } },
  active: { type: 'boolean' },
  branch_filter: { type: ['string', 'null'] },
  header_style: { type: 'string', enum: HEADER_STYLES },
  headers: {
    type: 'object',
    additionalProperties: { type: 'string', const: MASK },
    description: 'The custom headers\' names, each with `"********"` for its value (values are never returned); `{}` when none.',
  },
  max_rate: { ...INT_OR_NULL, description: 'Deliveries per second at most, or null: not paced.' },
  max_concurrency: { ...INT_OR_NULL, description: 'Attempts in flight at most, across all nodes, or null: no cap beyond the fair share.' },
  health: {
    type: 'object',
    additionalProperties: false,
    required: ['state'],
    description:
      'Endpoint health (SPEC §5.5): `{state: "healthy"}`, or while `paused` or `disabled` since when, why, how many deliveries are held and when the next probe goes (paused only).',
    properties: {
      state: { type: 'string', enum: HEALTH_STATES },
      since: TIME,
      reason: { type: ['string', 'null'] },
      held: { type: 'integer', minimum: 0 },
      next_probe_at: TIME_OR_NULL,
    },
  },
  created_at: TIME,
  updated_at: TIME,
  has_secret: { type: 'boolean', const: true },
  last_delivery: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['id', 'result', 'status_code', 'timestamp'],
    properties: { id: ID, result: { enum: ['Success', 'Failed', null] }, status_code: INT_OR_NULL, timestamp: TIME_OR_NULL },
  },
  deliveries_url: { type: 'string', format: 'uri' },
  ping_url: { type: 'string', format: 'uri' },
} as const;
const webhookRequired = [
  'id',
  'url',
  'content_type',
  'events',
  'active',
  'branch_filter',
  'header_style',
  'headers',
  'max_rate',
  'max_concurrency',
  'health',
  'created_at',
  'updated_at',
  'has_secret',
  'last_delivery',
  'deliveries_url',
  'ping_url',
] as const;

/** The API form of a webhook (SPEC §5.1): never its secret. */
export const WebhookSchema = named('Webhook', {
  type: 'object',
  additionalProperties: false,
  required: webhookRequired,
  properties: webhookProperties,
} as const);

/** A webhook just created: the only answer that ever carries a secret, and only one the server generated. */
export const WebhookCreatedSchema = named('WebhookCreated', {
  type: 'object',
  additionalProperties: false,
  required: webhookRequired,
  properties: { ...webhookProperties, secret: { type: 'string', description: 'Only when the request named no secret: the one generated, shown this once.' } },
} as const);

const HOOK_PARAMS = repoParams('id');

/** The API form of a webhook (SPEC §5.1): never its secret. */
export function presentWebhook(config: Config, hook: Webhook, last: Delivery | undefined, held = 0) {
  const base = `${config.baseUrl}/api/v1/webhooks/${hook.id}`;
  return {
    id: hook.id,
    url: hook.url,
    content_type: hook.content_type,
    events: hook.events,
    active: hook.active,
    branch_filter: hook.branch_filter,
    header_style: hook.header_style,
    headers: maskedHeaders(hook.header_names),
    max_rate: hook.max_rate,
    max_concurrency: hook.max_concurrency,
    health: presentHealth(hook, held),
    created_at: iso(hook.created_at),
    updated_at: iso(hook.updated_at),
    has_secret: true,
    last_delivery: last
      ? {
          id: last.id,
          result: resultLabel(last.status),
          status_code: last.status_code,
          timestamp: iso(last.last_attempt_at),
        }
      : null,
    deliveries_url: `${base}/deliveries`,
    ping_url: `${base}/ping`,
  };
}

/** A webhook's health as the API shows it: the state alone when healthy. */
export function presentHealth(hook: Webhook, held: number) {
  const h = hook.health;
  if (h.state === 'healthy') return { state: h.state };
  return { state: h.state, since: iso(h.since ?? hook.updated_at), reason: h.reason, held, next_probe_at: h.nextProbeAt === null ? null : iso(h.nextProbeAt) };
}

/** A repository webhook may not list `repository` or `import` (organization webhooks only, SPEC §5.4): 422. */
function refuseOrgOnlyEvents(events: readonly string[] | undefined) {
  const problems = orgOnlyEventProblems(events);
  if (problems.length > 0) throw validationFailed(problems);
}

/** Loads the webhook of {id} in the repository loaded by the access rule, or 404. */
async function hookOfRepo(params: { id: number }, ctx: RouteContext<'repo:admin'>, { db }: Services): Promise<Webhook> {
  const hook = await findWebhook(db, params.id);
  if (!hook || hook.repository_id !== ctx.state.repo.id) throw notFound('Webhook not found');
  return hook;
}

/** The API forms of webhooks, each with its last delivery. */
export async function present({ db, config }: Services, hooks: Webhook[]) {
  return (await withLastDelivery(db, hooks)).map(({ hook, last, held }) => presentWebhook(config, hook, last, held));
}

const hookRoute = { tag: 'webhooks', access: 'repo:admin' } as const;
const oneHook = { ...hookRoute, path: '/repos/{org}/{repo}/webhooks/{id}', params: HOOK_PARAMS, notFound: 'Webhook not found', load: hookOfRepo } as const;

/** Webhook CRUD under /repos/{org}/{repo}/webhooks, for organization owners (SPEC §5.2). */
export const webhookRoutes: Route[] = [
  route({
    ...hookRoute,
    id: 'createWebhook',
    method: 'post',
    path: '/repos/{org}/{repo}/webhooks',
    summary: 'Create a webhook (an active one is pinged at once)',
    body: WEBHOOK_CREATE,
    answers: { 201: WebhookCreatedSchema },
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const checked = await checkWebhookInput(services.config, body);
      if (checked.problems) throw validationFailed(checked.problems);
      const { input } = checked;
      refuseOrgOnlyEvents(input.events);
      const created = await createWebhook(services, ctx.state.repo, ctx.state.user, { ...input, url: input.url! });
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/webhooks/${created.webhook.id}`);
      ctx.body = { ...(await present(services, [created.webhook]))[0], ...(input.secret === undefined ? { secret: created.secret } : {}) };
    },
  }),
  route({
    ...hookRoute,
    id: 'listWebhooks',
    method: 'get',
    path: '/repos/{org}/{repo}/webhooks',
    summary: 'The webhooks of a repository',
    answers: { 200: listOf(WebhookSchema) },
    handler: async (_input, ctx, services) => {
      ctx.body = await present(services, await listWebhooks(services.db, ctx.state.repo.id));
    },
  }),
  route({
    ...oneHook,
    id: 'getWebhook',
    method: 'get',
    summary: 'A webhook',
    answers: { 200: WebhookSchema },
    handler: async ({ loaded: hook }, ctx, services) => {
      ctx.body = (await present(services, [hook]))[0];
    },
  }),
  route({
    ...oneHook,
    id: 'updateWebhook',
    method: 'patch',
    summary: 'Change a webhook',
    body: WEBHOOK_UPDATE,
    bodyOptional: true,
    answers: { 200: WebhookSchema },
    handler: async ({ body, loaded: hook }, ctx, services) => {
      const checked = await checkWebhookInput(services.config, body);
      if (checked.problems) throw validationFailed(checked.problems);
      refuseOrgOnlyEvents(checked.input.events);
      const updated = await updateWebhook(services, hook.id, checked.input);
      if (!updated) throw notFound('Webhook not found');
      ctx.body = (await present(services, [updated]))[0];
    },
  }),
  route({
    ...oneHook,
    id: 'deleteWebhook',
    method: 'delete',
    summary: 'Delete a webhook and its delivery history',
    answers: { 204: null },
    handler: async ({ loaded: hook }, ctx, services) => {
      await deleteWebhook(services.db, hook.id);
      ctx.status = 204;
    },
  }),
];
