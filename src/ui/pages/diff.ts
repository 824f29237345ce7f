import { changedFiles, type ChangedFile, type DiffSides } from '../../git/diff.ts';
import { readPatch, type Hunk, type PatchFile } from '../../git/patch.ts';
import { html, type SafeHtml } from '../html.ts';
import { plural } from '../format.ts';

const STATUS: Record<string, string> = { A: 'Added', M: 'Modified', D: 'Deleted', R: 'Renamed', C: 'Copied', T: 'Type changed' };

function statusBadge(status: string): SafeHtml {
  return html`<span class="diff-status s-${status.toLowerCase()}">${STATUS[status] ?? status}</span>`;
}

function pathLabel(file: ChangedFile): SafeHtml {
  return file.oldPath ? html`<span class="path">${file.oldPath}</span> → <span class="path">${file.path}</span>` : html`<span class="path">${file.path}</span>`;
}

function counts(file: ChangedFile): SafeHtml | '' {
  if (file.added === null) return html`<span class="muted">Binary</span>`;
  if (file.added === undefined) return '';
  return html`<span class="diff-counts"><span class="plus">+${file.added}</span> <span class="minus">−${file.removed}</span><span class="sr-only"> lines</span></span>`;
}

function hunkRows(hunk: Hunk): SafeHtml {
  const rows = hunk.lines.map((l) =>
    l.kind === 'note'
      ? html`<tr class="note"><td class="ln"></td><td class="ln"></td><td class="code">${l.text}</td></tr>`
      : html`<tr class="${l.kind}"><td class="ln">${l.old}</td><td class="ln">${l.new}</td><td class="code"><span class="mark">${l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span>${l.text}</td></tr>`,
  );
  return html`<tr class="hunk"><td class="ln"></td><td class="ln"></td><td class="code">${hunk.header}</td></tr>${rows}`;
}

function fileBody(file: ChangedFile, patch: PatchFile): SafeHtml {
  if (patch.binary)
    return html`<p class="diff-note">Binary file${file.status === 'A' ? ' added' : file.status === 'D' ? ' deleted' : ' changed'}; not shown.</p>`;
  const notes = patch.notes.length ? html`<p class="diff-note">${patch.notes.join(' · ')}</p>` : '';
  if (!patch.hunks.length) return html`${notes}${notes ? '' : html`<p class="diff-note">No changes to the content.</p>`}`;
  return html`${notes}<div class="diff-box" tabindex="0" role="region" aria-label="Changes to ${file.path}"><table class="diff">
    <thead class="sr-only"><tr><th scope="col">Old line</th><th scope="col">New line</th><th scope="col">Content</th></tr></thead>
    <tbody>${patch.hunks.map(hunkRows)}</tbody></table></div>`;
}

/**
 * The changed files between two commits and their diff from git's own patch, bounded:
 * the file list stops at 1,000 files and the patch at 300 files, 5,000 lines or 1 MiB,
 * whichever comes first (git is stopped there), and the page says what it left out.
 * `headingLevel` is that of the "Files changed" heading (file headings are one below).
 */
export async function diffView(dir: string, sides: DiffSides, headingLevel: 2 | 3 = 2): Promise<SafeHtml> {
  const [list, patch] = await Promise.all([changedFiles(dir, sides), readPatch(dir, sides)]);
  const { files, total } = list;
  if (files.length === 0) return html`<section class="card"><h${headingLevel}>Files changed</h${headingLevel}><p class="empty">No files changed.</p></section>`;
  const h = headingLevel;
  const h2 = (headingLevel + 1) as 3 | 4;
  const added = files.reduce((n, f) => n + (f.added ?? 0), 0);
  const removed = files.reduce((n, f) => n + (f.removed ?? 0), 0);
  const shown = patch.files.length;
  const unlisted = total === null ? null : total - files.length;
  const summary = html`<p class="muted">${total === null ? `More than ${files.length} files` : plural(total, 'file')} changed
    ${unlisted === 0 ? html`· <span class="plus">+${added}</span> <span class="minus">−${removed}</span><span class="sr-only"> lines</span>` : ''}</p>`;
  const rows = files.map(
    (f, i) =>
      html`<li class="row"><span>${statusBadge(f.status)} ${i < shown ? html`<a href="#diff-${i}">${pathLabel(f)}</a>` : pathLabel(f)}</span>${counts(f)}</li>`,
  );
  const more = unlisted ? html`<li class="row muted">and ${unlisted} more</li>` : unlisted === null ? html`<li class="row muted">and more not listed</li>` : '';
  const leftOut = (total ?? files.length + 1) - shown;
  const cut =
    patch.complete && leftOut <= 0
      ? ''
      : html`<p class="flash error diff-too-large" role="status">The diff is too large to show in full${
          leftOut > 0
            ? html`; ${total === null ? 'more files' : plural(leftOut, 'more file')} ${leftOut === 1 ? 'is' : 'are'} listed above without their changes`
            : ''
        }${shown > 0 && !patch.complete ? html`, and the changes of the last file shown are cut` : ''}.</p>`;
  const diffs = patch.files.map((p, i) => {
    const file = files[i] ?? { status: 'M', path: `file ${i + 1}` };
    return html`<section class="diff-file" id="diff-${i}"><h${h2} class="diff-head">${statusBadge(file.status)} ${pathLabel(file)} ${counts(file)}</h${h2}>${fileBody(file, p)}</section>`;
  });
  return html`<section class="card"><h${h}>Files changed</h${h}>${summary}<ul class="list files">${rows}${more}</ul></section>${diffs}${cut}`;
}
