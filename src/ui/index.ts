import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Mount } from '../http/mount.ts';
import type { Services } from '../services.ts';
import { endDeadSession, uiState } from './context.ts';
import { csrfMatches } from './csrf.ts';
import { errorPage, PageError, readForm, uiErrors } from './errors.ts';
import { staticAssets } from './static.ts';
import { authRoutes } from './routes/auth.ts';
import { homeRoutes } from './routes/home.ts';
import { importRoutes } from './routes/import.ts';
import { importHistoryRoutes } from './routes/importHistory.ts';
import { repoRoutes } from './routes/repo.ts';
import { historyRoutes } from './routes/history.ts';
import { codeRoutes } from './routes/code.ts';
import { ORG_HOOKS, webhookRoutes } from './routes/webhooks.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { mirrorRoutes } from './routes/mirror.ts';
import { accountRoutes } from './routes/accounts.ts';
import { trackerRoutes } from './routes/tracker.ts';

// Scripts and styles come only from /-/static; pages are never framed and forms post only here.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async function securityHeaders(ctx: Context, next: Next) {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  // Pages carry CSRF tokens and private data: never stored by a cache.
  ctx.set('Cache-Control', 'no-store');
  await next();
}

/** Every POST carries the CSRF token of its browser's seed (session or anonymous cookie), or gets a 403 page. */
async function checkCsrf(ctx: Context, next: Next) {
  if (ctx.method !== 'POST') return next();
  const form = await readForm(ctx);
  const seed: string | undefined = ctx.state.csrfSeed;
  if (!seed || !csrfMatches(seed, form.get('_csrf'))) {
    throw new PageError(403, 'Form expired', 'This form could not be verified (missing or stale CSRF token). Go back, reload the page and try again.');
  }
  ctx.state.form = form;
  await next();
}

// Paths the UI never answers: the REST API and metrics keep their JSON errors.
function isUiPath(path: string): boolean {
  return !/^\/(api|metrics)(\/|$)/.test(path);
}

/** The web UI (SPEC §12) under `/`; mounted last so Git transport routes match first. */
export const uiMount: Mount = (app, services: Services) => {
  const router = new Router();
  router.use(securityHeaders, uiErrors(services), uiState(services), checkCsrf, endDeadSession(services));
  // Fixed /-/ paths first: they would otherwise match /:org/:repo.
  authRoutes(router, services);
  accountRoutes(router, services);
  importRoutes(router, services);
  importHistoryRoutes(router, services);
  webhookRoutes(router, services, ORG_HOOKS);
  deliveryRoutes(router, services, ORG_HOOKS);
  homeRoutes(router, services);
  repoRoutes(router, services);
  historyRoutes(router, services);
  codeRoutes(router, services);
  webhookRoutes(router, services);
  deliveryRoutes(router, services);
  mirrorRoutes(router, services);
  trackerRoutes(router, services);
  const assets = staticAssets();
  const routes = router.routes();
  app.use(async function webUi(ctx, next) {
    if (!isUiPath(ctx.path)) return next();
    await assets(ctx, () => routes(ctx as Parameters<typeof routes>[0], next));
    // A browser asking for a page nobody serves gets an HTML 404 instead of the API's JSON.
    if (ctx.status === 404 && ctx.body == null && (ctx.method === 'GET' || ctx.method === 'HEAD') && /text\/html/.test(ctx.get('accept'))) {
      ctx.set('Cache-Control', 'no-store');
      errorPage(ctx, 404, 'Not found', 'There is no page at this address.');
    }
  });
};
