import type { Context } from 'koa';
import { html, type SafeHtml } from './html.ts';
import { ui } from './context.ts';

/** One step of the breadcrumb trail: a label and, except for the last, a link. */
export interface Crumb {
  label: string;
  href?: string;
}

/** What a page gives the layout. */
export interface PageOptions {
  title: string;
  crumbs?: Crumb[];
  /** Extra markup for <head> (a refresh for pages that follow a job). */
  head?: SafeHtml;
  status?: number;
}

/** The hidden CSRF field every form carries. */
export function csrfField(ctx: Context): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${ui(ctx).csrf}">`;
}

function header(ctx: Context): SafeHtml {
  const { session } = ui(ctx);
  const account = session
    ? html`<a href="/-/import">Import<span class="wide-only"> repository</span></a>
        <a href="/-/tokens">Tokens</a>
        <span class="who" title="Signed in as ${session.login}"><span class="sr-only">Signed in as </span>${session.login}</span>
        <form method="post" action="/-/logout" class="inline">${csrfField(ctx)}<button type="submit" class="link">Sign out</button></form>`
    : html`<a href="/-/login" class="button">Sign in</a>`;
  // One line at any width: the nav shrinks (a long login is cut with an ellipsis) before it wraps.
  return html`<header class="top"><div class="wrap"><a href="/" class="brand"><span aria-hidden="true">⚓ </span>Wharf</a><nav aria-label="Account">${account}</nav></div></header>`;
}

function crumbs(list: Crumb[] | undefined): SafeHtml | '' {
  if (!list || list.length < 2) return ''; // one step repeats the page's own heading
  const items = list.map((c, i) =>
    c.href && i < list.length - 1 ? html`<li><a href="${c.href}">${c.label}</a></li>` : html`<li aria-current="page">${c.label}</li>`,
  );
  return html`<nav class="crumbs" aria-label="Breadcrumb"><ol>${items}</ol></nav>`;
}

/** Renders a whole page into ctx: layout, flash message, and the page's own markup. */
export function renderPage(ctx: Context, options: PageOptions, body: SafeHtml): void {
  // Error pages may be drawn before uiState ran (an unknown path): no flash, no header.
  const flash = ctx.state.ui?.flash ?? null;
  const message = flash ? html`<p class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</p>` : '';
  ctx.status = options.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Wharf</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/-/static/wharf.css">
<script src="/-/static/wharf.js" defer></script>
${options.head ?? ''}
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
${ctx.state.ui ? header(ctx) : ''}
<main id="main" class="wrap" tabindex="-1">
${crumbs(options.crumbs)}
${message}
${body}
</main>
</body>
</html>
`.value;
}
