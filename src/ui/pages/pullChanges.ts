import type { MergeState } from '../../domain/merge.ts';
import type { PullRequest } from '../../domain/pulls.ts';
import { html, type SafeHtml } from '../html.ts';
import { shortSha, timeTag } from '../format.ts';
import { PULL_READ_LIMIT, type ChangedFile, type PullCommit } from '../pullGit.ts';

/** The commits of a pull request, oldest first, each linking to its commit page. */
export function commitsCard(base: string, commits: PullCommit[], more: boolean): SafeHtml {
  const list = commits.length
    ? html`<ul class="list">${commits.map(
        (c) =>
          html`<li class="row"><span><a href="${base}/commit/${c.sha}"><code class="sha">${shortSha(c.sha)}</code></a> ${c.subject}</span><span class="muted">${c.author} · ${timeTag(c.time)}</span></li>`,
      )}</ul>`
    : html`<p class="empty">No commits: the base branch already has every commit of the head branch.</p>`;
  const note = more ? html`<p class="muted">Only the latest ${PULL_READ_LIMIT} commits are listed.</p>` : '';
  return html`<section class="card" aria-labelledby="commits-heading"><h2 id="commits-heading">Commits <span class="count">${commits.length}${more ? '+' : ''}</span></h2>${list}${note}</section>`;
}

function counts(f: ChangedFile): SafeHtml {
  if (f.added === null) return html`<span class="muted">binary</span>`;
  return html`<span class="added">+${f.added}<span class="sr-only"> ${f.added === 1 ? 'line' : 'lines'} added,</span></span> <span class="removed">−${f.removed}<span class="sr-only"> ${f.removed === 1 ? 'line' : 'lines'} removed</span></span>`;
}

/** The files a pull request changes with their line counts; the diff itself is on the compare page. */
export function filesCard(compareHref: string, files: ChangedFile[] | null): SafeHtml {
  if (files === null)
    return html`<section class="card" aria-labelledby="files-heading"><h2 id="files-heading">Files changed</h2><p class="empty">The branches share no history: there is nothing to compare.</p></section>`;
  const shown = files.slice(0, PULL_READ_LIMIT);
  const list = files.length
    ? html`<ul class="list files">${shown.map((f) => html`<li class="row"><code class="path">${f.path}</code><span>${counts(f)}</span></li>`)}</ul>`
    : html`<p class="empty">No files changed.</p>`;
  const more = files.length > shown.length ? html`<p class="muted">and ${files.length - shown.length} more files.</p>` : '';
  return html`<section class="card" aria-labelledby="files-heading"><h2 id="files-heading">Files changed <span class="count">${files.length}</span></h2>
  ${list}${more}<p><a href="${compareHref}">View the full diff</a></p></section>`;
}

/** What the merge box says for each state a merge can meet (the same checks as the API's merge). */
export function mergeText(pull: PullRequest, state: MergeState): { kind: 'ok' | 'bad' | 'wait' | 'merged'; text: string } {
  switch (state.kind) {
    case 'merged':
      return { kind: 'merged', text: `Merged into ${pull.base_ref}${pull.merge_commit_sha ? ` as ${shortSha(pull.merge_commit_sha)}` : ''}.` };
    case 'closed':
      return { kind: 'bad', text: 'This pull request is closed without being merged.' };
    case 'branch_missing':
      return { kind: 'bad', text: `Branch ${state.branch} no longer exists: this pull request cannot be merged.` };
    case 'up_to_date':
      return { kind: 'wait', text: `${pull.base_ref} already contains every commit of ${pull.head_ref}: there is nothing to merge.` };
    case 'unrelated':
      return { kind: 'bad', text: `${pull.head_ref} and ${pull.base_ref} share no history: they cannot be merged.` };
    case 'conflicts':
      return { kind: 'bad', text: `This branch has conflicts with ${pull.base_ref} that must be resolved before it can be merged.` };
    case 'mergeable':
      return {
        kind: 'ok',
        text: state.fastForward
          ? `Can be merged: ${pull.base_ref} will fast-forward to ${pull.head_ref}.`
          : `Can be merged with a merge commit into ${pull.base_ref}.`,
      };
  }
}
