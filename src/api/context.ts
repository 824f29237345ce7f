import type { DefaultContext, ParameterizedContext } from 'koa';
import type { RequestState } from '../http/state.ts';
import type { Org, User } from '../domain/accounts.ts';
import type { Access as RepoAccess, Repository } from '../domain/repos.ts';
import type { Webhook } from '../webhooks/model.ts';

/**
 * Who may call a route, as the middlewares check it (src/api/access.ts), and the words
 * the OpenAPI document says it in. Repository and webhook rules answer 404 to a caller who
 * cannot see the repository, so its existence is never revealed.
 */
export const ACCESS = {
  public: 'No token needed.',
  token: 'Any valid token.',
  'repo:read': 'A token that can read the repository (any for a public one; a member of its organization otherwise).',
  'repo:write': "A member of the repository's organization.",
  'repo:admin': "An owner of the repository's organization.",
  'webhook:admin': "An owner of the organization of the webhook's repository.",
  'org:read': 'Any valid token; the organization must exist.',
  'org:member': 'A member of the organization.',
  'org:owner': 'An owner of the organization.',
  'site:admin': 'A site administrator.',
} as const;

/** One access rule of ACCESS. */
export type Access = keyof typeof ACCESS;

/** What the API's middlewares put in ctx.state: the shared fields and those of its access rules (src/api/access.ts). */
export interface ApiState extends RequestState {
  /** The webhook of /webhooks/{id} (webhook:admin). */
  webhook?: Webhook;
  /** The organization of /orgs/{org} (org:*). */
  org?: Org;
}

declare module 'koa' {
  interface DefaultState extends ApiState {}
}

/** What a route's access rule has put in ctx.state by the time its handler runs. */
export type StateFor<A extends Access> = A extends 'public'
  ? object
  : { user: User } & (A extends `repo:${string}`
      ? { repo: Repository; access: RepoAccess }
      : A extends 'webhook:admin'
        ? { webhook: Webhook } & ({ repo: Repository; org?: undefined } | { org: Org; repo?: undefined })
        : A extends `org:${string}`
          ? { org: Org }
          : object);

/** The Koa context of a route with access rule A: ctx.state holds exactly the API's fields, narrowed by what that rule loads. */
export type RouteContext<A extends Access> = ParameterizedContext<ApiState & StateFor<A>, DefaultContext>;
