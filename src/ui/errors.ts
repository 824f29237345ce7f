import type { Context, Next } from 'koa';
import type { Services } from '../services.ts';
import { redirectWithFlash, returnPath } from './context.ts';
import { html } from './html.ts';
import { renderPage } from './layout.ts';
import { readWhole } from '../http/deadlines.ts';
import { classify } from '../http/classify.ts';
import type { ErrorDetail } from '../errors/wharfError.ts';

/** An error a UI handler raises to show an error page with a status. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

/** Raised by pages that need a signed-in user; the browser is sent to the sign-in page and back. */
export class SignInRequired extends Error {}

/** Limit of a form body; the biggest form (a webhook) is far below it. */
export const FORM_LIMIT = 64 * 1024;

/** Reads an `application/x-www-form-urlencoded` body; other bodies and oversize ones are errors shown as pages. */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new PageError(415, 'Unsupported form', 'Forms are sent as application/x-www-form-urlencoded.');
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > FORM_LIMIT) throw new PageError(413, 'Form too large', 'The form is over its size limit.');
  try {
    return new URLSearchParams((await readWhole(ctx, FORM_LIMIT)).toString('utf8'));
  } catch (err) {
    const { code } = classify(err);
    if (code === 'payload_too_large') throw new PageError(413, 'Form too large', 'The form is over its size limit.');
    if (code === 'request_timeout') throw new PageError(408, 'Request timeout', 'The form took too long to arrive.');
    throw new PageError(400, 'Bad request', 'The form could not be read.');
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Not allowed',
  404: 'Not found',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Too large',
  415: 'Unsupported form',
  422: 'Not accepted',
  429: 'Too many requests',
};

/** Renders an error page. */
export function errorPage(ctx: Context, status: number, title: string, message: string, details: ErrorDetail[] = []): void {
  const list = details.length ? html`<ul class="errors">${details.map((d) => html`<li><code>${d.path}</code> ${d.message}</li>`)}</ul>` : '';
  renderPage(
    ctx,
    { title, status },
    html`<section class="card error-page"><h1>${title}</h1><p>${message}</p>${list}<p><a href="/">Back to the start page</a></p></section>`,
  );
}

/**
 * Turns what UI handlers throw into HTML pages: the domain's own errors get the status
 * classify() gives them, and unknown errors become a 500 page with the request id,
 * logged like the API's. (A session whose token stopped working is ended before any
 * page runs: context.ts endDeadSession.)
 */
export function uiErrors(services: Services) {
  return async function renderUiError(ctx: Context, next: Next) {
    try {
      await next();
    } catch (err) {
      if (err instanceof SignInRequired) return redirectWithFlash(ctx, `/-/login?next=${encodeURIComponent(returnPath(ctx))}`, 'Sign in to see that page.');
      if (err instanceof PageError) return errorPage(ctx, err.status, err.title, err.message, err.details);
      const e = classify(err);
      if (e.status < 500) {
        for (const [name, value] of Object.entries(e.headers)) ctx.set(name, value);
        return errorPage(ctx, e.status, TITLES[e.status] ?? 'Request refused', e.message, e.details);
      }
      services.log.error({ err, request_id: ctx.state.requestId }, 'web UI request failed');
      errorPage(ctx, 500, 'Something went wrong', `The server could not show this page. Request id: ${ctx.state.requestId}.`);
    }
  };
}
