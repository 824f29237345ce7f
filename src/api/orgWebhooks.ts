import type { RouteContext } from './context.ts';
import type { Services } from '../services.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import type { Webhook } from '../webhooks/model.ts';
import { createWebhook, deleteWebhook, findWebhook, listOrgWebhooks, updateWebhook } from '../webhooks/store.ts';
import { checkWebhookInput, WEBHOOK_CREATE, WEBHOOK_UPDATE } from '../webhooks/input.ts';
import { route, type Route } from './route.ts';
import { listOf, orgParams } from './schemas.ts';
import { present, WebhookCreatedSchema, WebhookSchema } from './webhooks.ts';

/** Loads the webhook of {id} of the organization loaded by the access rule, or 404. */
async function hookOfOrg(params: { id: number }, ctx: RouteContext<'org:owner'>, { db }: Services): Promise<Webhook> {
  const hook = await findWebhook(db, params.id);
  if (!hook || hook.org_id !== ctx.state.org.id) throw notFound('Webhook not found');
  return hook;
}

const hookRoute = { tag: 'webhooks', access: 'org:owner', denied: 'Only organization owners may manage webhooks' } as const;
const oneHook = { ...hookRoute, path: '/orgs/{org}/webhooks/{id}', params: orgParams('id'), notFound: 'Webhook not found', load: hookOfOrg } as const;

/**
 * Organization webhooks under /orgs/{org}/webhooks, for its owners (SPEC §5.4): the
 * record and rules of repository webhooks, plus the `repository` and `import` events.
 */
export const orgWebhookRoutes: Route[] = [
  route({
    ...hookRoute,
    id: 'createOrgWebhook',
    method: 'post',
    path: '/orgs/{org}/webhooks',
    summary: 'Create an organization webhook (an active one is pinged at once)',
    body: WEBHOOK_CREATE,
    answers: { 201: WebhookCreatedSchema },
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const checked = await checkWebhookInput(services.config, body);
      if (checked.problems) throw validationFailed(checked.problems);
      const { input } = checked;
      const created = await createWebhook(services, ctx.state.org, ctx.state.user, { ...input, url: input.url! });
      ctx.status = 201;
      ctx.set('Location', `/api/v1/orgs/${ctx.state.org.name}/webhooks/${created.webhook.id}`);
      ctx.body = { ...(await present(services, [created.webhook]))[0], ...(input.secret === undefined ? { secret: created.secret } : {}) };
    },
  }),
  route({
    ...hookRoute,
    id: 'listOrgWebhooks',
    method: 'get',
    path: '/orgs/{org}/webhooks',
    summary: 'The webhooks of an organization',
    answers: { 200: listOf(WebhookSchema) },
    handler: async (_input, ctx, services) => {
      ctx.body = await present(services, await listOrgWebhooks(services.db, ctx.state.org.id));
    },
  }),
  route({
    ...oneHook,
    id: 'getOrgWebhook',
    method: 'get',
    summary: 'An organization webhook',
    answers: { 200: WebhookSchema },
    handler: async ({ loaded: hook }, ctx, services) => {
      ctx.body = (await present(services, [hook]))[0];
    },
  }),
  route({
    ...oneHook,
    id: 'updateOrgWebhook',
    method: 'patch',
    summary: 'Change an organization webhook',
    body: WEBHOOK_UPDATE,
    bodyOptional: true,
    answers: { 200: WebhookSchema },
    handler: async ({ body, loaded: hook }, ctx, services) => {
      const checked = await checkWebhookInput(services.config, body);
      if (checked.problems) throw validationFailed(checked.problems);
      const updated = await updateWebhook(services, hook.id, checked.input);
      if (!updated) throw notFound('Webhook not found');
      ctx.body = (await present(services, [updated]))[0];
    },
  }),
  route({
    ...oneHook,
    id: 'deleteOrgWebhook',
    method: 'delete',
    summary: 'Delete an organization webhook and its delivery history',
    answers: { 204: null },
    handler: async ({ loaded: hook }, ctx, services) => {
      await deleteWebhook(services.db, hook.id);
      ctx.status = 204;
    },
  }),
];
