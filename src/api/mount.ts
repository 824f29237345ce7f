import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import type { Services } from '../services.ts';
import { jsonBody, JSON_LIMIT } from '../http/body.ts';
import { notFound, validationFailed, WharfError, type ErrorDetail } from '../errors/wharfError.ts';
import { classify } from '../http/classify.ts';
import { accessErrors, accessMiddlewares } from './access.ts';
import type { Route } from './route.ts';

/** `/repos/{org}/{repo}` → `/repos/:org/:repo`, the router's form. */
export function routerPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Every status a route can answer with: its successes, its own errors, those its access rule and input imply, 429 (the rate limit) and 500. */
export function answerStatuses(r: Route): number[] {
  const statuses = new Set<number>([...Object.keys(r.answers).map(Number), ...(r.errors ?? []), ...accessErrors(r.access), 500]);
  if (r.path !== '/health') statuses.add(429);
  if (r.params && r.notFound) statuses.add(404);
  if (r.query) statuses.add(422);
  if (r.body) for (const s of [400, 408, 413, 415, 422]) statuses.add(s);
  return [...statuses].sort((a, b) => a - b);
}

/** Checks every answer against the route's declared statuses and schemas; a mismatch is logged and becomes a 500 (tests turn this on). */
function answerCheck(r: Route, services: Services): Middleware {
  const declared = new Set(answerStatuses(r));
  const checks = r.compiled.answers();
  const mismatch = (ctx: Context, problem: unknown) => {
    services.log.error({ route: r.id, status: ctx.status, problem, request_id: ctx.state.requestId }, 'answer does not match its schema');
    return new WharfError('internal', 'Internal error');
  };
  return async function checkAnswer(ctx: Context, next: Next) {
    try {
      await next();
    } catch (err) {
      const { status } = classify(err);
      if (!declared.has(status)) throw mismatch(ctx, `undeclared error status ${status}`);
      throw err;
    }
    if (!checks.has(ctx.status)) throw mismatch(ctx, `undeclared status ${ctx.status}`);
    const check = checks.get(ctx.status);
    const problem = check ? check(ctx.body) : ctx.body == null ? null : 'a body where none is declared';
    if (problem) throw mismatch(ctx, problem);
  };
}

/** The middleware that checks path parameters, query and body against the route's schemas and hands them to its handler. */
function inputAndHandler(r: Route, services: Services): Middleware {
  const { params, query, body } = r.compiled;
  const checkBody = (ctx: Context): unknown => {
    if (!body) return undefined;
    const raw = ctx.request.body === undefined && r.bodyOptional ? {} : ctx.request.body;
    const details: ErrorDetail[] = r.bodyCheck ? r.bodyCheck(raw) : [];
    let value: unknown;
    try {
      value = body(raw);
    } catch (err) {
      if (!(err instanceof WharfError)) throw err;
      details.unshift(...err.details);
    }
    if (details.length > 0) throw validationFailed(details);
    return value;
  };
  return async function handle(ctx: Context) {
    let bodyValue = r.bodyFirst ? checkBody(ctx) : undefined;
    let paramValue: unknown;
    if (params) {
      const checked = params(ctx.params);
      if ('details' in checked) throw notFound(r.notFound);
      paramValue = checked.value;
    }
    const loaded = r.load ? await r.load(paramValue as never, ctx as never, services) : undefined;
    let queryValue: unknown;
    if (query) {
      const checked = query(ctx.query);
      const details = [...('details' in checked ? checked.details : []), ...(r.queryCheck ? r.queryCheck(ctx.query) : [])];
      if (details.length > 0) throw validationFailed(details);
      queryValue = 'value' in checked ? checked.value : undefined;
    }
    if (!r.bodyFirst) bodyValue = checkBody(ctx);
    await r.handler({ params: paramValue, query: queryValue, body: bodyValue, loaded } as never, ctx as never, services);
  };
}

/** Runs middlewares one after the other, as Koa does, ending with nothing. */
function chain(stack: Middleware[]): (ctx: Context) => Promise<void> {
  const run = async (i: number, ctx: Context): Promise<void> => {
    if (i < stack.length) await stack[i](ctx, () => run(i + 1, ctx));
  };
  return (ctx) => run(0, ctx);
}

/** Runs the route unless it passes its path parameters on; then the next route of the same path tries (a name where an id was expected). */
function unlessPassed(passes: (raw: Record<string, string>) => boolean, stack: Middleware[]): Middleware {
  const run = chain(stack);
  return async function tryRoute(ctx: Context, next: Next) {
    if (passes(ctx.params)) return next();
    await run(ctx);
  };
}

/** The middlewares of one route, in the order the API has always checked things: access, body, input, handler. */
function middlewares(r: Route, services: Services): Middleware[] {
  const { before, after } = accessMiddlewares(services.db, r.access, r.denied);
  const stack: Middleware[] = [];
  if (services.config.validateResponses) stack.push(answerCheck(r, services));
  stack.push(...before);
  if (r.body) stack.push(jsonBody(r.bodyLimit ?? JSON_LIMIT));
  stack.push(...after, inputAndHandler(r, services));
  return stack;
}

/** Mounts declared routes on a router, each exactly as declared. */
export function mountRoutes(router: Router, services: Services, routes: readonly Route[]): void {
  for (const r of routes) {
    const stack = middlewares(r, services);
    if (r.passes) router[r.method](routerPath(r.path), unlessPassed(r.passes, stack));
    else router[r.method](routerPath(r.path), ...stack);
  }
}
