import type { Context, Next } from 'koa';
import type { Services } from '../services.ts';
import { apiClient, type ApiClient } from './apiClient.ts';
import { clearCookie, readCookie, setCookie } from './cookies.ts';
import { anonymousSeed, csrfToken } from './csrf.ts';
import { loadSession, SESSION_IDLE_MS, type UiSession } from './session.ts';

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
  /** The REST API as the signed-in user; null when signed out. */
  api: ApiClient | null;
  /** The CSRF token every form of this page carries. */
  csrf: string;
  flash: Flash | null;
  /** True when the site is served over https (cookies get Secure). */
  secure: boolean;
}

/** The UI state of a request (set by uiState). */
export function ui(ctx: Context): UiState {
  return ctx.state.ui;
}

/** Where the UI reaches the REST API: this process's own listen address, on loopback when it listens on all addresses. */
export function loopbackUrl(services: Services): string {
  const url = new URL(services.listenUrl ?? services.config.baseUrl);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

/** Loads the session (if any), an API client acting as its user, the CSRF token and any flash message. */
export function uiState(services: Services) {
  const base = loopbackUrl(services);
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
        if ((parsed.kind === 'notice' || parsed.kind === 'error') && typeof parsed.text === 'string') flash = { kind: parsed.kind, text: parsed.text.slice(0, 500) };
      } catch {
        // unreadable: dropped below
      }
      clearCookie(ctx, FLASH_COOKIE, secure);
    }
    ctx.state.ui = {
      session,
      api: session ? apiClient(base, session.token, ctx.state.requestId) : null,
      csrf: seed ? csrfToken(seed) : '',
      flash,
      secure,
    } satisfies UiState;
    ctx.state.csrfSeed = seed;
    await next();
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
