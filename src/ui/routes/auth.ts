import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import type { Db } from '../../db/connect.ts';
import type { User } from '../../domain/accounts.ts';
import { tokenUser } from '../../http/auth.ts';
import { WharfError } from '../../errors/wharfError.ts';
import type { ChargeRequest } from '../../http/rateLimit.ts';
import { PageError } from '../errors.ts';
import { clearCookie, setCookie } from '../cookies.ts';
import { postedForm, redirectWithFlash, SESSION_COOKIE, ui } from '../context.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { createSession, destroySession, SESSION_IDLE_MS } from '../session.ts';
import { formErrors } from '../pages/formErrors.ts';

/** A path on this site to return to after signing in; anything else (other hosts, `//x`) becomes `/`. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[^\s]*$/.test(value) && value.length < 2000 ? value : '/';
}

function loginPage(ctx: Context, next: string, error?: string) {
  const shown = formErrors(error ? { token: [error] } : {}, [{ key: 'token', id: 'token', label: 'Access token' }]);
  renderPage(
    ctx,
    { title: 'Sign in', status: error ? 422 : 200 },
    html`<section class="card narrow">
  <h1>Sign in</h1>
  <p>Paste an access token. Get one with <code>wharf token create &lt;login&gt;</code>, or use the token printed at first start.</p>
  <form method="post" action="/-/login" class="stack">
    ${csrfField(ctx)}${shown.summary}
    <input type="hidden" name="next" value="${next}">
    <label for="token">Access token</label>
    <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required ${shown.attrs('token')}>
    ${shown.message('token')}
    <button type="submit" class="primary">Sign in</button>
  </form>
</section>`,
  );
}

/**
 * The user of a sign-in's token, or null. Every attempt counts against the browser's own
 * address (as an anonymous API request does), before the token is looked at: past the
 * address's limit every token, valid or not, gets the same 429, so the form is no oracle
 * for guessed tokens.
 */
async function checkSignIn(ctx: Context, db: Db, token: string): Promise<User | null> {
  const charge: ChargeRequest | undefined = ctx.state.chargeRequest;
  try {
    await charge?.();
  } catch (err) {
    if (!(err instanceof WharfError) || err.code !== 'rate_limited') throw err;
    for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
    throw new PageError(429, 'Too many requests', 'Too many sign-in attempts from this address. Wait a while and try again.');
  }
  return tokenUser(ctx, db, token);
}

/** Sign in with a token (kept server-side, the cookie holds only a random session id) and sign out. */
export function authRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/-/login', (ctx) => {
    if (ui(ctx).session) return ctx.redirect(safeNext(ctx.query.next));
    loginPage(ctx, safeNext(ctx.query.next));
  });

  router.post('/-/login', async (ctx) => {
    const form = postedForm(ctx);
    const next = safeNext(form.get('next'));
    const token = (form.get('token') ?? '').trim();
    if (!token) return loginPage(ctx, next, 'Enter a token.');
    // Checked in-process, not through the API over loopback: an API call would be charged to this server's own address.
    const user = await checkSignIn(ctx, db, token);
    if (!user) return loginPage(ctx, next, 'This token is unknown, expired or revoked.');
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
