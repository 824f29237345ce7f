import { listOrgWebhooks } from '../webhooks/store.ts';
import type { Route } from './route.ts';
import { orgParams } from './schemas.ts';
import { webhookRoutesFor } from './webhookRoutes.ts';

/**
 * Organization webhooks under /orgs/{org}/webhooks, for its owners (SPEC §5.4): the
 * record and rules of repository webhooks, plus the `repository` and `import` events.
 */
export const orgWebhookRoutes: Route[] = webhookRoutesFor({
  access: 'org:owner',
  denied: 'Only organization owners may manage webhooks',
  path: '/orgs/{org}/webhooks',
  params: orgParams('id'),
  noun: 'OrgWebhook',
  one: 'an organization webhook',
  of: 'an organization',
  owner: (ctx) => ctx.state.org,
  user: (ctx) => ctx.state.user,
  owns: (hook, ctx) => hook.org_id === ctx.state.org.id,
  list: (db, ctx) => listOrgWebhooks(db, ctx.state.org.id),
  location: (ctx, id) => `/api/v1/orgs/${ctx.state.org.name}/webhooks/${id}`,
  orgEvents: true,
});
