import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { ApiError, apiClient } from '../apiClient.ts';
import { clearCookie, setCookie } from '../cookies.ts';
import { loopbackUrl, redirectWithFlash, SESSION_COOKIE, ui } from '../context.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { createSession, destroySession, SESSION_IDLE_MS } from '../session.ts';

/** A path on this site to return to after signing in; anything else (other hosts, `//x`) becomes `/`. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[^\s]*$/.test(value) && value.length < 2000 ? value : '/';
}

function loginPage(ctx: Context, next: string, error?: string) {
  renderPage(
    ctx,
    { title: 'Sign in', status: error ? 422 : 200 },
    html`<section class="card narrow">
  <h1>Sign in</h1>
  <p>Paste an access token. Get one with <code>wharf token create &lt;login&gt;</code>, or use the token printed at first start.</p>
  <form method="post" action="/-/login" class="stack">
    ${csrfField(ctx)}
    <input type="hidden" name="next" value="${next}">
    <label for="token">Access token</label>
    <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required ${error ? html`aria-invalid="true" aria-describedby="token-error"` : ''}>
    ${error ? html`<p class="field-error" id="token-error">${error}</p>` : ''}
    <button type="submit" class="primary">Sign in</button>
  </form>
</section>`,
  );
}

/** Sign in with a token (kept server-side, the cookie holds only a random session id) and sign out. */
export function authRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/-/login', (ctx) => {
    if (ui(ctx).session) return ctx.redirect(safeNext(ctx.query.next));
    loginPage(ctx, safeNext(ctx.query.next));
  });

  router.post('/-/login', async (ctx) => {
    const form: URLSearchParams = ctx.state.form;
    const next = safeNext(form.get('next'));
    const token = (form.get('token') ?? '').trim();
    if (!token) return loginPage(ctx, next, 'Enter a token.');
    let user: { id: number; login: string };
    try {
      user = await apiClient(loopbackUrl(services), token, ctx.state.requestId).get('/api/v1/user');
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return loginPage(ctx, next, 'This token is unknown, expired or revoked.');
      throw err;
    }
    const id = await createSession(db, user, token);
    setCookie(ctx, SESSION_COOKIE, id, { secure: ui(ctx).secure, maxAgeSeconds: SESSION_IDLE_MS / 1000 });
    ctx.status = 303;
    ctx.redirect(next);
  });

  router.post('/-/logout', async (ctx) => {
    const session = ui(ctx).session;
    if (session) await destroySession(db, session.id);
    clearCookie(ctx, SESSION_COOKIE, ui(ctx).secure);
    redirectWithFlash(ctx, '/', 'Signed out.');
  });
}
