import type { Context } from 'koa';
import type { Comment } from '../../domain/comments.ts';
import type { Issue } from '../../domain/issues.ts';
import { MAX_INT } from '../../domain/inputs/numbers.ts';
import { PageError } from '../errors.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { plural, timeTag } from '../format.ts';

/** An issue or pull request number from the path; anything but a positive integer in range is a 404 page. */
export function numberParam(value: string | undefined, what: string): number {
  if (!value || !/^[1-9]\d{0,9}$/.test(value) || Number(value) > MAX_INT) throw new PageError(404, 'Not found', `No such ${what}.`);
  return Number(value);
}

/** A `before` cursor from the query (the number or id to continue below), or undefined. */
export function cursorParam(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) && Number(value) <= MAX_INT ? Number(value) : undefined;
}

/** The state of an issue or pull request as a badge: Open, Closed or Merged. */
export function stateBadge(item: Pick<Issue, 'state'> & { merged?: boolean }): SafeHtml {
  if (item.merged) return html`<span class="result merged">Merged</span>`;
  return item.state === 'open' ? html`<span class="result ok">Open</span>` : html`<span class="result bad">Closed</span>`;
}

/**
 * Text someone wrote (an issue's body, a comment), shown as they typed it: escaped, line
 * breaks and spacing kept (CSS pre-wrap), never rendered as Markdown or HTML.
 */
export function writtenText(text: string, empty = 'No description provided.'): SafeHtml {
  return text.trim() ? html`<div class="written">${text}</div>` : html`<p class="empty">${empty}</p>`;
}

/** Tabs of a list (open, closed…) as links; the current one marked. */
export function stateTabs(base: string, tabs: Array<[string, string]>, current: string): SafeHtml {
  return html`<nav class="filters" aria-label="Filter by state">${tabs.map(
    ([state, label]) => html`<a href="${base}?state=${state}" ${state === current ? html`aria-current="page"` : ''}>${label}</a>`,
  )}</nav>`;
}

/** One row of an issue or pull request list, linking to its page. */
export function threadRow(href: string, item: Issue & { merged?: boolean }, extra: SafeHtml | '' = ''): SafeHtml {
  return html`<li class="row"><span><a href="${href}" class="strong">${item.title}</a> <span class="muted">#${item.number}</span>${extra}</span>
    <span class="muted">${stateBadge(item)} opened ${timeTag(item.created_at)}${item.author ? html` by ${item.author}` : ''}</span></li>`;
}

/** The link to the next (older) page of a list that came back full; `after` is the number or id to continue below. */
export function olderLink(base: string, state: string, after: number | undefined, full: boolean): SafeHtml | '' {
  if (!full || after === undefined) return '';
  return html`<p class="actions"><a class="button" href="${`${base}?state=${encodeURIComponent(state)}&before=${after}`}">Older</a></p>`;
}

/** The opening post (title is the page's heading) and the comments, oldest first. */
export function conversation(item: Issue, comments: Comment[]): SafeHtml {
  const opening = html`<article class="card post" aria-label="Description"><p class="post-head"><strong>${item.author ?? 'ghost'}</strong> opened this ${timeTag(item.created_at)}</p>${writtenText(item.body)}</article>`;
  const list = comments.map(
    (c) =>
      html`<article class="card post" id="comment-${c.id}" aria-label="Comment by ${c.author ?? 'ghost'}"><p class="post-head"><strong>${c.author ?? 'ghost'}</strong> commented ${timeTag(c.created_at)}</p>${writtenText(c.body, '')}</article>`,
  );
  return html`${opening}<h2 class="sr-only">${plural(comments.length, 'comment')}</h2>${list}`;
}

/** The comment form and the Close/Reopen button, for those who may (organization members, as the API's repo:write). */
export function threadForms(ctx: Context, base: string, item: Issue & { merged?: boolean }, noun: string): SafeHtml {
  const closable = !item.merged;
  const stateButton = closable
    ? html`<form method="post" action="${base}/state" class="inline">${csrfField(ctx)}<input type="hidden" name="state" value="${item.state === 'open' ? 'closed' : 'open'}">
        <button type="submit">${item.state === 'open' ? `Close ${noun}` : `Reopen ${noun}`}</button></form>`
    : '';
  return html`<section class="card" aria-labelledby="comment-heading"><h2 id="comment-heading">Add a comment</h2>
    <form method="post" action="${base}/comments" class="stack">${csrfField(ctx)}
      <label for="comment-body">Comment</label><textarea id="comment-body" name="body" rows="5" required maxlength="262144"></textarea>
      <div class="actions"><button type="submit" class="primary">Comment</button></div></form>
    <div class="actions">${stateButton}</div></section>`;
}
