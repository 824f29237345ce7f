import type { Revision } from '../../git/revision.ts';
import type { TreeEntry } from '../../git/tree.ts';
import { codeHref } from '../code/address.ts';
import { renderMarkdown, isMarkdown } from '../code/markdown.ts';
import { shortSha } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import type { RepoRecord } from '../reader.ts';
import { formatBytes } from './importJob.ts';

/** What a branch, tag or commit is called next to the path: "Branch main", "Commit 1a2b3c4". */
export function refIndicator(revision: Revision): SafeHtml {
  const kind = { branch: 'Branch', tag: 'Tag', commit: 'Commit' }[revision.kind];
  const name = revision.kind === 'commit' ? shortSha(revision.commit) : revision.name;
  return html`<span class="code-ref"><span class="muted">${kind}</span> <span class="ref" title="${revision.commit}">${name}</span></span>`;
}

/** The path as links from the repository's root, the last part (the page's own) unlinked. */
export function pathTrail(repo: RepoRecord, revision: Revision, path: string[]): SafeHtml {
  const steps = [{ label: repo.name, href: codeHref(repo, 'tree', revision.name) }];
  path.forEach((part, i) => steps.push({ label: part, href: codeHref(repo, 'tree', revision.name, path.slice(0, i + 1)) }));
  const items = steps.map((s, i) => (i < steps.length - 1 ? html`<li><a href="${s.href}">${s.label}</a></li>` : html`<li aria-current="page">${s.label}</li>`));
  return html`<div class="code-bar">${refIndicator(revision)}<nav class="code-path" aria-label="Path"><ol>${items}</ol></nav></div>`;
}

/** A submodule's URL as a link when a browser can open it (http or https, a relative one resolved against the clone URL), else as text. */
function submoduleUrl(repo: RepoRecord, url: string | undefined): SafeHtml {
  if (!url) return html`<span class="muted">URL not in .gitmodules</span>`;
  let href: string | null = null;
  try {
    const resolved = new URL(url, `${repo.clone_url}/`);
    if (resolved.protocol === 'http:' || resolved.protocol === 'https:') href = resolved.href;
  } catch {
    // scp-like (git@host:path) or another transport: shown, not linked
  }
  return href ? html`<a class="url" href="${href}">${url}</a>` : html`<span class="url">${url}</span>`;
}

function entryRow(repo: RepoRecord, revision: Revision, path: string[], entry: TreeEntry, submodules: Map<string, string>): SafeHtml {
  const at = [...path, entry.name];
  if (entry.type === 'commit') {
    // A submodule names a commit of another repository: its URL at that commit, never a link into this one.
    return html`<li class="row file-row"><span><span class="strong">${entry.name}</span> <span class="muted">@</span> <code class="sha" title="${entry.id}">${shortSha(entry.id)}</code> <span class="muted">submodule</span></span>${submoduleUrl(repo, submodules.get(at.join('/')))}</li>`;
  }
  if (entry.type === 'tree') {
    return html`<li class="row file-row"><a class="strong" href="${codeHref(repo, 'tree', revision.name, at)}">${entry.name}/</a><span class="muted">folder</span></li>`;
  }
  const note = entry.mode === '120000' ? 'symbolic link' : formatBytes(entry.size ?? 0);
  return html`<li class="row file-row"><a href="${codeHref(repo, 'blob', revision.name, at)}">${entry.name}</a><span class="muted">${note}</span></li>`;
}

/** A folder's entries, folders first, each leading to its tree or blob page (a submodule to its URL). */
export function folderListing(repo: RepoRecord, revision: Revision, path: string[], entries: TreeEntry[], submodules: Map<string, string>): SafeHtml {
  const rows = entries.map((e) => entryRow(repo, revision, path, e, submodules));
  return html`<section class="card"><h2>Files <span class="count">${entries.length}</span></h2>
  ${entries.length ? html`<ul class="list files">${rows}</ul>` : html`<p class="empty">This folder is empty.</p>`}</section>`;
}

// GitHub's order of preference when a folder has more than one.
const README_NAMES = ['readme.md', 'readme.markdown', 'readme', 'readme.txt'];

/** The folder's README entry (case-insensitive), if it has one. */
export function findReadme(entries: TreeEntry[]): TreeEntry | null {
  for (const wanted of README_NAMES) {
    const found = entries.find((e) => e.type === 'blob' && e.mode !== '120000' && e.name.toLowerCase() === wanted);
    if (found) return found;
  }
  return null;
}

/** A README below a listing: Markdown rendered (relative links and images at this folder and revision), other text as it is. */
export function readmeSection(repo: RepoRecord, revision: Revision, path: string[], name: string, text: string): SafeHtml {
  const base = { links: codeHref(repo, 'blob', revision.name), images: codeHref(repo, 'raw', revision.name), folder: path };
  const body = isMarkdown(name) ? html`<div class="markdown">${renderMarkdown(text, base)}</div>` : html`<pre class="readme-text">${text}</pre>`;
  return html`<section class="card readme"><h2><a href="${codeHref(repo, 'blob', revision.name, [...path, name])}">${name}</a></h2>${body}</section>`;
}
