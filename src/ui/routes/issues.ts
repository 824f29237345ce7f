import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { createIssue, findIssue, listIssues, updateIssue } from '../../domain/issues.ts';
import { createComment, listComments } from '../../domain/comments.ts';
import { NEW_ISSUE } from '../../domain/inputs/issues.ts';
import { COMMENT_BODY } from '../../domain/inputs/comments.ts';
import { compileDetails } from '../../util/schema.ts';
import { postedForm, redirectWithFlash, seeOther } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { readerFor, type SeenRepo } from '../reader.ts';
import { requireUser } from '../user.ts';
import { formErrors, type FieldErrors } from '../pages/formErrors.ts';
import { conversation, cursorParam, numberParam, olderLink, stateBadge, stateTabs, threadForms, threadRow } from '../pages/thread.ts';
import { repoHeader } from './repo.ts';

/** Issues a list page shows. */
const PAGE_SIZE = 25;

const checkIssue = compileDetails(NEW_ISSUE);
const checkComment = compileDetails(COMMENT_BODY);

function crumbs(repo: SeenRepo, last: string, listed = true) {
  const base = `/${repo.org}/${repo.name}`;
  return [
    { label: repo.org, href: `/${repo.org}` },
    { label: repo.name, href: base },
    ...(listed ? [{ label: 'Issues', href: `${base}/issues` }] : []),
    { label: last },
  ];
}

/** The new-issue form, with what was typed and its errors. */
function newIssuePage(ctx: Context, repo: SeenRepo, values: { title: string; body: string }, errors: FieldErrors, status = 200) {
  const base = `/${repo.org}/${repo.name}`;
  const view = formErrors(errors, [
    { key: 'title', id: 'issue-title', label: 'Title' },
    { key: 'body', id: 'issue-body', label: 'Description' },
  ]);
  renderPage(
    ctx,
    { title: `New issue · ${repo.full_name}`, crumbs: crumbs(repo, 'New issue'), status },
    html`${repoHeader(repo, repo.access.admin, 'issues')}
    <section class="card narrow"><h2>New issue</h2>${view.summary}
    <form method="post" action="${base}/issues" class="stack">${csrfField(ctx)}
      <label for="issue-title">Title</label><input id="issue-title" name="title" required maxlength="1024" value="${values.title}" ${view.attrs('title')}>${view.message('title')}
      <label for="issue-body">Description</label><textarea id="issue-body" name="body" rows="10" maxlength="262144" ${view.attrs('body')}>${values.body}</textarea>${view.message('body')}
      <div class="actions"><button type="submit" class="primary">Open issue</button><a href="${base}/issues">Cancel</a></div>
    </form></section>`,
  );
}

/** Errors by form field from a schema's details (`/title` → title). */
function byField(details: { path: string; message: string }[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const d of details) (errors[d.path.slice(1) || '_'] ??= []).push(d.message);
  return errors;
}

/**
 * Issue pages (SPEC §12): the list (open and closed, paged), the new-issue form, an
 * issue with its comments, and the comment and Close/Reopen forms. Reading needs what
 * `git clone` needs; opening, commenting, closing and reopening need membership, as the
 * API's repo:write, and go through the same domain functions (which raise the events).
 */
export function issueRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/:org/:repo/issues', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const state = ctx.query.state === 'closed' ? 'closed' : 'open';
    const base = `/${repo.org}/${repo.name}`;
    const issues = await listIssues(db, repo.repository, { kind: 'issue', state, limit: PAGE_SIZE, before: cursorParam(ctx.query.before) });
    const list = issues.length
      ? html`<ul class="list">${issues.map((i) => threadRow(`${base}/issues/${i.number}`, i))}</ul>`
      : html`<p class="empty">No ${state} issues.</p>`;
    const newButton = repo.access.write ? html`<a class="button primary" href="${base}/issues/new">New issue</a>` : '';
    renderPage(
      ctx,
      { title: `Issues · ${repo.full_name}`, crumbs: crumbs(repo, 'Issues', false) },
      html`${repoHeader(repo, repo.access.admin, 'issues')}
      <section class="card"><div class="list-head"><h2>Issues</h2>${newButton}</div>
      ${stateTabs(
        `${base}/issues`,
        [
          ['open', 'Open'],
          ['closed', 'Closed'],
        ],
        state,
      )}
      ${list}${olderLink(`${base}/issues`, state, issues.at(-1)?.number, issues.length === PAGE_SIZE)}</section>`,
    );
  });

  router.get('/:org/:repo/issues/new', async (ctx) => {
    requireUser(ctx);
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'write');
    newIssuePage(ctx, repo, { title: '', body: '' }, {});
  });

  router.post('/:org/:repo/issues', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'write');
    const form = postedForm(ctx);
    const values = { title: (form.get('title') ?? '').trim(), body: form.get('body') ?? '' };
    const details = checkIssue(values);
    if (details.length) return newIssuePage(ctx, repo, values, byField(details), 422);
    const issue = await createIssue(services, repo.repository, requireUser(ctx), values);
    redirectWithFlash(ctx, `/${repo.org}/${repo.name}/issues/${issue.number}`, `Issue #${issue.number} opened.`);
  });

  router.get('/:org/:repo/issues/:number', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const number = numberParam(ctx.params.number, 'issue');
    const issue = await findIssue(db, repo.repository, number);
    if (!issue) throw new PageError(404, 'Not found', `There is no issue #${number} in ${repo.full_name}.`);
    const base = `/${repo.org}/${repo.name}`;
    // A pull request's number opens its own page, as on GitHub.
    if (issue.kind === 'pull') return ctx.redirect(`${base}/pulls/${number}`);
    const comments = await listComments(db, issue);
    renderPage(
      ctx,
      { title: `${issue.title} · Issue #${number} · ${repo.full_name}`, crumbs: crumbs(repo, `#${number}`) },
      html`${repoHeader(repo, repo.access.admin, 'issues')}
      <div class="thread-head"><h2 class="thread-title">${issue.title} <span class="muted">#${number}</span></h2><p>${stateBadge(issue)}</p></div>
      ${conversation(issue, comments)}
      ${repo.access.write ? threadForms(ctx, `${base}/issues/${number}`, issue, 'issue') : ''}`,
    );
  });

  // Comments on issues and pull requests alike (one number sequence), back to the page they were written on.
  const comment = async (ctx: Context) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'write');
    const number = numberParam(ctx.params.number, 'issue');
    const body = postedForm(ctx).get('body') ?? '';
    const issue = await findIssue(db, repo.repository, number);
    if (!issue) throw new PageError(404, 'Not found', `There is no issue or pull request #${number} in ${repo.full_name}.`);
    const page = `/${repo.org}/${repo.name}/${issue.kind === 'pull' ? 'pulls' : 'issues'}/${number}`;
    const details = checkComment({ body });
    if (!body.trim() || details.length) return redirectWithFlash(ctx, page, `The comment was not added: ${details[0]?.message ?? 'it is empty'}.`, 'error');
    const created = await createComment(services, repo.repository, requireUser(ctx), number, body);
    if (!created) throw new PageError(404, 'Not found', `There is no issue or pull request #${number} in ${repo.full_name}.`);
    seeOther(ctx, `${page}#comment-${created.id}`);
  };
  router.post('/:org/:repo/issues/:number/comments', comment);
  router.post('/:org/:repo/pulls/:number/comments', comment);

  router.post('/:org/:repo/issues/:number/state', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'write');
    const number = numberParam(ctx.params.number, 'issue');
    const state = postedForm(ctx).get('state');
    if (state !== 'open' && state !== 'closed') throw new PageError(422, 'Not accepted', 'The state must be open or closed.');
    const issue = await updateIssue(services, repo.repository, requireUser(ctx), number, { state });
    if (!issue) throw new PageError(404, 'Not found', `There is no issue #${number} in ${repo.full_name}.`);
    redirectWithFlash(ctx, `/${repo.org}/${repo.name}/issues/${number}`, `Issue #${number} ${state === 'closed' ? 'closed' : 'reopened'}.`);
  });
}
