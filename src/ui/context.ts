import type { Context, Next } from 'koa';
import type { Services } from '../services.ts';
import type { User } from '../domain/accounts.ts';
import { userForToken } from '../domain/tokens.ts';
import { clearCookie, readCookie, setCookie } from './cookies.ts';
import { anonymousSeed, csrfToken } from './csrf.ts';
import { destroySession, loadSession, SESSION_IDLE_MS, type UiSession } from './session.ts';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'wharf_session';
const FLASH_COOKIE = 'wharf_flash';

/** A one-time message shown on the next page (after a redirect). */
export interface Flash {
  kind: 'notice' | 'error';
  text: string;
}

/** What every UI handler gets in ctx.state.ui. */
export interface UiState {
  session: UiSession | null;
  /**
   * The signed-in user, whose token the session holds, looked up as bearer auth looks it up;
   * null when signed out, or when the session's token no longer works (the session then ends).
   */
  user: User | null;
  /** The CSRF token every form of this page carries. */
  csrf: string;
  flash: Flash | null;
  /** True when the site is served over https (cookies get Secure). */
  secure: boolean;
}

// Fields the web UI's middlewares put in ctx.state.
declare module 'koa' {
  interface DefaultState {
    /** The session, user, CSRF token and flash of the page (uiState). */
    ui?: UiState;
    /** What the CSRF token of a form is checked against: the session id or the anonymous cookie (uiState). */
    csrfSeed?: string;
    /** The fields of a POSTed form whose CSRF token matched. */
    form?: URLSearchParams;
  }
}

/** The UI state of a request (set by uiState, which runs before every page). */
export function ui(ctx: Context): UiState {
  if (!ctx.state.ui) throw new Error('uiState did not run before this page');
  return ctx.state.ui;
}

/** The fields of the POSTed form (read and CSRF-checked before every POST handler). */
export function postedForm(ctx: Context): URLSearchParams {
  if (!ctx.state.form) throw new Error('the CSRF check did not run before this POST handler');
  return ctx.state.form;
}

/** Loads the session (if any), its user, the CSRF token and any flash message. */
export function uiState(services: Services) {
  const secure = services.config.baseUrl.startsWith('https:');
  return async function loadUi(ctx: Context, next: Next) {
    const session = await loadSession(services.db, readCookie(ctx, SESSION_COOKIE));
    // The cookie lives as long as the server-side session: renewed whenever the session is.
    if (session?.renewed) setCookie(ctx, SESSION_COOKIE, session.id, { secure, maxAgeSeconds: SESSION_IDLE_MS / 1000 });
    // A POST checks its token against the seed it already has; minting one here would only hide the missing cookie.
    const seed = session?.id ?? anonymousSeed(ctx, secure, ctx.method === 'GET' || ctx.method === 'HEAD');
    let flash: Flash | null = null;
    const flashCookie = readCookie(ctx, FLASH_COOKIE);
    if (flashCookie && ctx.method === 'GET') {
      try {
        const parsed = JSON.parse(Buffer.from(flashCookie, 'base64url').toString('utf8'));
        if ((parsed.kind === 'notice' || parsed.kind === 'error') && typeof parsed.text === 'string')
          flash = { kind: parsed.kind, text: parsed.text.slice(0, 500) };
      } catch {
        // unreadable: dropped below
      }
      clearCookie(ctx, FLASH_COOKIE, secure);
    }
    // The same look-up as bearer auth: a revoked or expired token signs nobody in.
    const user = session ? await userForToken(services.db, session.token) : null;
    ctx.state.ui = {
      session,
      user,
      csrf: seed ? csrfToken(seed) : '',
      flash,
      secure,
    } satisfies UiState;
    ctx.state.csrfSeed = seed;
    await next();
  };
}

// Sign-in and sign-out work with the session as it is: the one ends it, the other replaces it.
const SESSION_PATHS = new Set(['/-/login', '/-/logout']);

/**
 * Where to come back to after signing in: the page itself for a GET; for a POST the page
 * the form was on (same origin only), as the POST's own path may have no page.
 */
export function returnPath(ctx: Context): string {
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return ctx.url;
  try {
    const referer = new URL(ctx.get('referer'));
    if (referer.host === ctx.host) return referer.pathname + referer.search;
  } catch {
    // no usable referer
  }
  return '/';
}

/**
 * Ends a session whose token stopped working (revoked or expired) and sends the browser to
 * sign in again, on every page but sign-in and sign-out. Runs after the CSRF check, so a
 * forged form changes nothing.
 */
export function endDeadSession(services: Services) {
  return async function checkSessionUser(ctx: Context, next: Next) {
    const { session, user } = ui(ctx);
    if (!session || user || SESSION_PATHS.has(ctx.path)) return next();
    await destroySession(services.db, session.id);
    clearCookie(ctx, SESSION_COOKIE, ui(ctx).secure);
    redirectWithFlash(ctx, `/-/login?next=${encodeURIComponent(returnPath(ctx))}`, 'Your token no longer works; sign in again.', 'error');
  };
}

/** Redirects (303, so the browser follows with GET) and shows `text` on the next page. */
export function redirectWithFlash(ctx: Context, location: string, text: string, kind: Flash['kind'] = 'notice'): void {
  const value = Buffer.from(JSON.stringify({ kind, text }), 'utf8').toString('base64url');
  setCookie(ctx, FLASH_COOKIE, value, { secure: ui(ctx).secure });
  seeOther(ctx, location);
}

/** A 303 See Other to a path of this site. */
export function seeOther(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
  ctx.status = 303;
}
