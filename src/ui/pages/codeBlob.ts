import type { Revision } from '../../git/revision.ts';
import { codeHref } from '../code/address.ts';
import { SHOWN_LIMIT, type BlobContent } from '../code/content.ts';
import { isMarkdown, renderMarkdown } from '../code/markdown.ts';
import { html, type SafeHtml } from '../html.ts';
import type { RepoRecord } from '../reader.ts';
import { plural } from '../format.ts';
import { formatBytes } from './importJob.ts';

/** What the blob page knows besides the content: where it is and, for an LFS file, whether its object may be served. */
export interface BlobPage {
  repo: RepoRecord;
  revision: Revision;
  path: string[];
  content: BlobContent;
  /** For an LFS pointer: the stored size of its object when it is linked to this repository, else null. */
  lfsSize?: number | null;
  /** `?plain=1`: a Markdown file's source instead of its rendering. */
  plain: boolean;
}

/** Text with a line number before each line (CSS counters, so copying the text takes no numbers); the box scrolls sideways by itself. */
function codeBox(name: string, text: string): SafeHtml {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const digits = Math.min(String(lines.length).length, 7);
  return html`<pre class="code digits-${digits}" tabindex="0" role="region" aria-label="Contents of ${name}"><code>${lines.map(
    (line, i) => html`<span class="line" id="L${i + 1}">${line}</span>\n`,
  )}</code></pre>`;
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function body(page: BlobPage, name: string, rawHref: string): SafeHtml {
  const { content } = page;
  switch (content.kind) {
    case 'large':
      return html`<p class="blob-note">This file is ${formatBytes(content.size)}, more than the ${formatBytes(SHOWN_LIMIT)} a page shows. <a href="${rawHref}">View the raw file</a></p>`;
    case 'binary':
      return html`<p class="blob-note">Binary file not shown. <a href="${rawHref}">Download ${name}</a> (${formatBytes(content.size)})</p>`;
    case 'lfs': {
      const state =
        page.lfsSize != null
          ? html`<a href="${rawHref}">Download ${name}</a>`
          : html`<span class="result bad">Missing</span> The object is not stored for this repository, so it cannot be downloaded.`;
      return html`<p class="blob-note"><span class="badge">Stored with Git LFS</span> ${state}</p><p class="muted">Object <span class="guid">sha256:${content.pointer.oid}</span></p>`;
    }
    case 'text':
      if (content.text === '') return html`<p class="blob-note">This file is empty.</p>`;
      if (isMarkdown(name) && !page.plain) {
        const base = {
          links: codeHref(page.repo, 'blob', page.revision.name),
          images: codeHref(page.repo, 'raw', page.revision.name),
          folder: page.path.slice(0, -1),
        };
        return html`<div class="markdown">${renderMarkdown(content.text, base)}</div>`;
      }
      return codeBox(name, content.text);
  }
}

/** A file at a revision: name, size, raw link; its text with line numbers, Markdown rendered (and its source), or why it is not shown. */
export function blobView(page: BlobPage): SafeHtml {
  const name = page.path[page.path.length - 1];
  const href = codeHref(page.repo, 'blob', page.revision.name, page.path);
  const rawHref = codeHref(page.repo, 'raw', page.revision.name, page.path);
  const { content } = page;
  // An LFS file's size is its object's, as the pointer says; the pointer's own few bytes would mislead.
  const facts = [formatBytes(content.kind === 'lfs' ? content.pointer.size : content.size)];
  if (content.kind === 'text') facts.push(plural(lineCount(content.text), 'line'));
  const views =
    content.kind === 'text' && isMarkdown(name)
      ? html`<a href="${href}" ${page.plain ? '' : html`aria-current="page"`}>Rendered</a><a href="${href}?plain=1" ${page.plain ? html`aria-current="page"` : ''}>Source</a>`
      : '';
  return html`<section class="card blob"><div class="blob-head"><h2>${name}</h2><span class="muted">${facts.join(' · ')}</span>
  <nav class="blob-views" aria-label="File views">${views}<a href="${rawHref}">Raw</a></nav></div>${body(page, name, rawHref)}</section>`;
}
