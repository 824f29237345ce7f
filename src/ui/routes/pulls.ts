import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { findIssue } from '../../domain/issues.ts';
import { findPull, listPulls, updatePull, type PullRequest } from '../../domain/pulls.ts';
import { mergePull, mergeState } from '../../domain/merge.ts';
import { listComments } from '../../domain/comments.ts';
import { branchCommit, dirOf } from '../../domain/refs.ts';
import type { Repository } from '../../domain/repos.ts';
import { WharfError } from '../../errors/wharfError.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { readerFor, type SeenRepo } from '../reader.ts';
import { requireUser } from '../user.ts';
import { pullCommits, pullFiles } from '../pullGit.ts';
import { commitsCard, filesCard, mergeText } from '../pages/pullChanges.ts';
import { conversation, cursorParam, numberParam, olderLink, stateBadge, stateTabs, threadForms, threadRow } from '../pages/thread.ts';
import { repoHeader } from './repo.ts';

const PAGE_SIZE = 25;

const STATES = { open: { state: 'open' }, closed: { state: 'closed' }, merged: { state: 'closed', merged: true } } as const;

function crumbs(repo: SeenRepo, last: string, listed = true) {
  const base = `/${repo.org}/${repo.name}`;
  return [
    { label: repo.org, href: `/${repo.org}` },
    { label: repo.name, href: base },
    ...(listed ? [{ label: 'Pull requests', href: `${base}/pulls` }] : []),
    { label: last },
  ];
}

/**
 * The tips a pull request's commits and files are read between: while it is open, its
 * branches as they are now (as they were recorded when one is gone); once merged, the
 * tips it was merged at.
 */
async function tipsOf(services: Services, repo: Repository, pull: PullRequest): Promise<{ base: string; head: string }> {
  if (pull.merged) return { base: pull.base_sha, head: pull.head_sha };
  const [head, base] = await Promise.all([branchCommit(services.config, repo, pull.head_ref), branchCommit(services.config, repo, pull.base_ref)]);
  return { base: base ?? pull.base_sha, head: head ?? pull.head_sha };
}

/**
 * Pull request pages (SPEC §12): the list (open, closed, merged), and a pull request with
 * its branches, conversation, commits, changed files and merge state; members (the API's
 * repo:write) comment, close, reopen and merge, through the API's domain functions.
 */
export function pullRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/:org/:repo/pulls', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const state = ctx.query.state === 'closed' || ctx.query.state === 'merged' ? ctx.query.state : 'open';
    const base = `/${repo.org}/${repo.name}`;
    const pulls = await listPulls(db, repo.repository, { ...STATES[state], limit: PAGE_SIZE, before: cursorParam(ctx.query.before) });
    const branches = (p: PullRequest) => html` <span class="muted"><span class="ref">${p.head_ref}</span> → <span class="ref">${p.base_ref}</span></span>`;
    const list = pulls.length
      ? html`<ul class="list">${pulls.map((p) => threadRow(`${base}/pulls/${p.number}`, p, branches(p)))}</ul>`
      : html`<p class="empty">No ${state} pull requests.</p>`;
    renderPage(
      ctx,
      { title: `Pull requests · ${repo.full_name}`, crumbs: crumbs(repo, 'Pull requests', false) },
      html`${repoHeader(repo, repo.access.admin, 'pulls')}
      <section class="card"><h2>Pull requests</h2>
      ${stateTabs(
        `${base}/pulls`,
        [
          ['open', 'Open'],
          ['closed', 'Closed'],
          ['merged', 'Merged'],
        ],
        state,
      )}
      ${list}${olderLink(`${base}/pulls`, state, pulls.at(-1)?.number, pulls.length === PAGE_SIZE)}</section>`,
    );
  });

  router.get('/:org/:repo/pulls/:number', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const number = numberParam(ctx.params.number, 'pull request');
    const base = `/${repo.org}/${repo.name}`;
    const pull = await findPull(db, repo.repository, number);
    if (!pull) {
      // An issue's number opens the issue, as on GitHub.
      if (await findIssue(db, repo.repository, number, 'issue')) return ctx.redirect(`${base}/issues/${number}`);
      throw new PageError(404, 'Not found', `There is no pull request #${number} in ${repo.full_name}.`);
    }
    const tips = await tipsOf(services, repo.repository, pull);
    const dir = dirOf(services.config, repo.repository);
    const [comments, state, log, files] = await Promise.all([
      listComments(db, pull),
      mergeState(services, repo.repository, pull),
      pullCommits(dir, tips.base, tips.head),
      pullFiles(dir, tips.base, tips.head),
    ]);
    const merge = mergeText(pull, state);
    const mergeButton =
      repo.access.write && state.kind === 'mergeable'
        ? html`<form method="post" action="${base}/pulls/${number}/merge">${csrfField(ctx)}<input type="hidden" name="sha" value="${state.head}">
          <button type="submit" class="primary">Merge pull request</button></form>`
        : '';
    renderPage(
      ctx,
      { title: `${pull.title} · Pull request #${number} · ${repo.full_name}`, crumbs: crumbs(repo, `#${number}`) },
      html`${repoHeader(repo, repo.access.admin, 'pulls')}
      <div class="thread-head"><h2 class="thread-title">${pull.title} <span class="muted">#${number}</span></h2>
      <p>${stateBadge(pull)} <span class="muted">by ${pull.author ?? 'ghost'}:</span> <span class="ref">${pull.head_ref}</span> → <span class="ref">${pull.base_ref}</span></p></div>
      <section class="card merge-box ${merge.kind}" aria-labelledby="merge-heading"><h2 id="merge-heading">Merge</h2><p>${merge.text}</p>${mergeButton}</section>
      ${conversation(pull, comments)}
      ${commitsCard(base, log.commits, log.more)}
      ${filesCard(`${base}/compare/${tips.base}...${tips.head}`, files)}
      ${repo.access.write ? threadForms(ctx, `${base}/pulls/${number}`, pull, 'pull request') : ''}`,
    );
  });

  router.post('/:org/:repo/pulls/:number/merge', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'write');
    const number = numberParam(ctx.params.number, 'pull request');
    const page = `/${repo.org}/${repo.name}/pulls/${number}`;
    const sha = postedForm(ctx).get('sha');
    // The head the page showed: a head that moved since is a conflict, as with the API's `sha`.
    const expected = sha && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha) ? sha : undefined;
    try {
      const result = await mergePull(services, repo.repository, requireUser(ctx), number, expected);
      if (!result) throw new PageError(404, 'Not found', `There is no pull request #${number} in ${repo.full_name}.`);
      redirectWithFlash(ctx, page, `Pull request #${number} merged into ${result.pull.base_ref}${result.fastForward ? ' (fast-forward)' : ''}.`);
    } catch (err) {
      if (!(err instanceof WharfError) || err.code !== 'conflict') throw err;
      redirectWithFlash(ctx, page, `Not merged: ${err.message}.`, 'error');
    }
  });

  router.post('/:org/:repo/pulls/:number/state', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'write');
    const number = numberParam(ctx.params.number, 'pull request');
    const state = postedForm(ctx).get('state');
    if (state !== 'open' && state !== 'closed') throw new PageError(422, 'Not accepted', 'The state must be open or closed.');
    const page = `/${repo.org}/${repo.name}/pulls/${number}`;
    try {
      const pull = await updatePull(services, repo.repository, requireUser(ctx), number, { state });
      if (!pull) throw new PageError(404, 'Not found', `There is no pull request #${number} in ${repo.full_name}.`);
      redirectWithFlash(ctx, page, `Pull request #${number} ${state === 'closed' ? 'closed' : 'reopened'}.`);
    } catch (err) {
      if (!(err instanceof WharfError) || err.code !== 'validation_failed') throw err;
      redirectWithFlash(ctx, page, `Not changed: ${err.details[0]?.message ?? err.message}.`, 'error');
    }
  });
}
