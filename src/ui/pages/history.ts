import type { LogEntry } from '../../git/history.ts';
import type { RepoRecord } from '../reader.ts';
import { html, type SafeHtml } from '../html.ts';
import { shortSha, timeTag } from '../format.ts';

/** A ref name as a path in an address: each segment encoded, the slashes kept (`feature/x`). */
export function refPath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

/** The address of one of a repository's pages: `/<org>/<repo>/<part>`. */
export function repoHref(repo: RepoRecord, part: string): string {
  return `/${repo.org}/${repo.name}/${part}`;
}

/** The address of a commit's page. */
export function commitHref(repo: RepoRecord, sha: string): string {
  return repoHref(repo, `commit/${sha}`);
}

/** Commits as rows: the subject linking to the commit's page, its short id, author and time. */
export function commitRows(repo: RepoRecord, commits: LogEntry[]): SafeHtml {
  return html`<ol class="list commits">${commits.map(
    (c) =>
      html`<li class="row"><span><a href="${commitHref(repo, c.sha)}">${c.subject || '(no message)'}</a></span><span class="muted"><code class="sha">${shortSha(c.sha)}</code> · ${c.author} · ${timeTag(c.time)}</span></li>`,
  )}</ol>`;
}

/** "Newer" and "Older" (or "Previous" and "Next") links between the pages of a list. */
export function pager(labels: [string, string], previous: string | null, next: string | null): SafeHtml | '' {
  if (!previous && !next) return '';
  return html`<nav class="pager" aria-label="Pages">${previous ? html`<a class="button" href="${previous}" rel="prev">${labels[0]}</a>` : ''}${
    next ? html`<a class="button" href="${next}" rel="next">${labels[1]}</a>` : ''
  }</nav>`;
}

/** The page number of `?page=`: 1 when absent, null when it is not a whole number from 1 to 100,000. */
export function pageNumber(value: unknown): number | null {
  if (value === undefined) return 1;
  if (typeof value !== 'string' || !/^[1-9]\d{0,5}$/.test(value)) return null;
  const n = Number(value);
  return n <= 100_000 ? n : null;
}
