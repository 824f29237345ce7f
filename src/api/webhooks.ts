import { listWebhooks } from '../webhooks/store.ts';
import type { Route } from './route.ts';
import { repoParams } from './schemas.ts';
import { webhookRoutesFor } from './webhookRoutes.ts';

/** Webhook CRUD under /repos/{org}/{repo}/webhooks, for organization owners (SPEC §5.2). */
export const webhookRoutes: Route[] = webhookRoutesFor({
  access: 'repo:admin',
  path: '/repos/{org}/{repo}/webhooks',
  params: repoParams('id'),
  noun: 'Webhook',
  one: 'a webhook',
  of: 'a repository',
  owner: (ctx) => ctx.state.repo,
  user: (ctx) => ctx.state.user,
  owns: (hook, ctx) => hook.repository_id === ctx.state.repo.id,
  list: (db, ctx) => listWebhooks(db, ctx.state.repo.id),
  location: (ctx, id) => `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/webhooks/${id}`,
  orgEvents: false,
});
