import type { User } from '../domain/accounts.ts';
import type { Access, Repository } from '../domain/repos.ts';
import type { ChargeRequest } from './rateLimit.ts';

/**
 * What the shared middlewares put in ctx.state; a field a middleware sets is optional here,
 * and a route's access rule narrows it (src/api/context.ts, RouteContext). Koa's own
 * DefaultState takes these fields, so every context reads them typed; each surface adds
 * its own fields the same way (src/api/context.ts, src/ui/context.ts).
 */
export interface RequestState {
  /** The request's id (X-Request-Id), set first of all. */
  requestId: string;
  /** The caller of a valid bearer token (requireUser). */
  user?: User;
  /** The repository of :org/:repo and the caller's access to it (repoAccess). */
  repo?: Repository;
  access?: Access;
  /** Charges the rate limit of a request whose token is only read later (Git transport). */
  chargeRequest?: ChargeRequest;
}

declare module 'koa' {
  interface DefaultState extends RequestState {}
}
