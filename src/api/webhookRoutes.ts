import type { RouteContext } from './context.ts';
import type { Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import type { User } from '../domain/accounts.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import type { Webhook } from '../webhooks/model.ts';
import type { WebhookOwner } from '../webhooks/ping.ts';
import { createWebhook, deleteWebhook, findWebhook, updateWebhook } from '../webhooks/store.ts';
import { checkWebhookInput, orgOnlyEventProblems, WEBHOOK_CREATE, WEBHOOK_UPDATE } from '../webhooks/input.ts';
import { route, type Answer, type Route } from './route.ts';
import { listOf, orgParams, repoParams } from './schemas.ts';
import { present, WebhookCreatedSchema, WebhookSchema } from './webhookRecord.ts';

/** The access rules of the two owners of webhooks: a repository's organization owners, an organization's owners. */
type HookAccess = 'repo:admin' | 'org:owner';

/** The path parameters of one webhook, under a repository or an organization. */
type OneHookParams = ReturnType<typeof repoParams<'id'>> | ReturnType<typeof orgParams<'id'>>;

/** What differs between repository webhooks (SPEC §5.2) and organization webhooks (SPEC §5.4): everything else is written once below. */
export interface WebhookScope<A extends HookAccess> {
  access: A;
  /** The 403 message of an `org:owner` route. */
  denied?: string;
  /** The collection's path: `/repos/{org}/{repo}/webhooks` or `/orgs/{org}/webhooks`. */
  path: string;
  /** The path parameters of `{path}/{id}`. */
  params: OneHookParams;
  /** The operation ids' middle: `Webhook` (createWebhook, listWebhooks…) or `OrgWebhook`. */
  noun: string;
  /** Summaries: one webhook (`a webhook`, `an organization webhook`), and whose list it is (`a repository`). */
  one: string;
  of: string;
  /** The owner the access rule loaded, and the caller. */
  owner: (ctx: RouteContext<A>) => WebhookOwner;
  user: (ctx: RouteContext<A>) => User;
  /** Whether a webhook belongs to that owner (another owner's is not found). */
  owns: (hook: Webhook, ctx: RouteContext<A>) => boolean;
  list: (db: Db, ctx: RouteContext<A>) => Promise<Webhook[]>;
  /** The API path of a created webhook, for `Location`. */
  location: (ctx: RouteContext<A>, id: number) => string;
  /** True where the `repository` and `import` events may be listed (organization webhooks only, SPEC §5.4). */
  orgEvents: boolean;
}

/** Capitalizes a summary's first letter. */
function upper(text: string): string {
  return text[0].toUpperCase() + text.slice(1);
}

/** Webhook CRUD under one owner, for its owners: create, list, get, change, delete. */
export function webhookRoutesFor<A extends HookAccess>(scope: WebhookScope<A>): Route[] {
  /** A 422 for the events this owner's webhooks may not list. */
  function refuseEvents(events: readonly string[] | undefined) {
    if (scope.orgEvents) return;
    const problems = orgOnlyEventProblems(events);
    if (problems.length > 0) throw validationFailed(problems);
  }

  /** Loads the webhook of {id} of the owner loaded by the access rule, or 404. */
  async function load(params: { id: number }, ctx: RouteContext<A>, { db }: Services): Promise<Webhook> {
    const hook = await findWebhook(db, params.id);
    if (!hook || !scope.owns(hook, ctx)) throw notFound('Webhook not found');
    return hook;
  }

  const hookRoute = { tag: 'webhooks', access: scope.access, ...(scope.denied === undefined ? {} : { denied: scope.denied }) };
  const oneHook = { ...hookRoute, path: `${scope.path}/{id}`, params: scope.params, notFound: 'Webhook not found', load };
  return [
    route({
      ...hookRoute,
      id: `create${scope.noun}`,
      method: 'post',
      path: scope.path,
      summary: `Create ${scope.one} (an active one is pinged at once)`,
      body: WEBHOOK_CREATE,
      answers: { 201: WebhookCreatedSchema },
      headers: { 201: ['Location'] },
      handler: async ({ body }, ctx, services) => {
        const checked = await checkWebhookInput(services.config, body);
        if (checked.problems) throw validationFailed(checked.problems);
        const { input } = checked;
        refuseEvents(input.events);
        const created = await createWebhook(services, scope.owner(ctx), scope.user(ctx), { ...input, url: input.url! });
        ctx.status = 201;
        ctx.set('Location', scope.location(ctx, created.webhook.id));
        ctx.body = { ...(await present(services, [created.webhook]))[0], ...(input.secret === undefined ? { secret: created.secret } : {}) } satisfies Answer<
          typeof WebhookCreatedSchema
        >;
      },
    }),
    route({
      ...hookRoute,
      id: `list${scope.noun}s`,
      method: 'get',
      path: scope.path,
      summary: `The webhooks of ${scope.of}`,
      answers: { 200: listOf(WebhookSchema) },
      handler: async (_input, ctx, services) => {
        ctx.body = await present(services, await scope.list(services.db, ctx));
      },
    }),
    route({
      ...oneHook,
      id: `get${scope.noun}`,
      method: 'get',
      summary: upper(scope.one),
      answers: { 200: WebhookSchema },
      handler: async ({ loaded: hook }, ctx, services) => {
        ctx.body = (await present(services, [hook]))[0];
      },
    }),
    route({
      ...oneHook,
      id: `update${scope.noun}`,
      method: 'patch',
      summary: `Change ${scope.one}`,
      body: WEBHOOK_UPDATE,
      bodyOptional: true,
      answers: { 200: WebhookSchema },
      handler: async ({ body, loaded: hook }, ctx, services) => {
        const checked = await checkWebhookInput(services.config, body);
        if (checked.problems) throw validationFailed(checked.problems);
        refuseEvents(checked.input.events);
        const updated = await updateWebhook(services, hook.id, checked.input);
        if (!updated) throw notFound('Webhook not found');
        ctx.body = (await present(services, [updated]))[0];
      },
    }),
    route({
      ...oneHook,
      id: `delete${scope.noun}`,
      method: 'delete',
      summary: `Delete ${scope.one} and its delivery history`,
      answers: { 204: null },
      handler: async ({ loaded: hook }, ctx, services) => {
        await deleteWebhook(services.db, hook.id);
        ctx.status = 204;
      },
    }),
  ];
}
