import type { Revision } from '../../git/revision.ts';
import { readBlob, submodulesAt, type TreeEntry } from '../../git/tree.ts';
import { html, type SafeHtml } from '../html.ts';
import type { RepoRecord } from '../reader.ts';
import { findReadme, folderListing, readmeSection } from '../pages/codeTree.ts';
import { blobContent } from './content.ts';

/** A README larger than this is listed but not rendered below its folder. */
const README_LIMIT = 512 * 1024;

/**
 * A folder's listing (its entries from one `ls-tree`) and its README, read with one git,
 * and, only when the folder holds a submodule, `.gitmodules` with one more. No "last commit
 * per file": on a large history that walk alone would take longer than the page may.
 */
export async function folderView(dir: string, repo: RepoRecord, revision: Revision, path: string[], entries: TreeEntry[]): Promise<SafeHtml> {
  const readme = findReadme(entries);
  const [submodules, content] = await Promise.all([
    entries.some((e) => e.type === 'commit') ? submodulesAt(dir, revision.commit) : new Map<string, string>(),
    readme && (readme.size ?? 0) <= README_LIMIT ? readBlob(dir, readme.id).then((bytes) => blobContent(bytes.length, bytes)) : null,
  ]);
  const readmeHtml = readme && content?.kind === 'text' ? readmeSection(repo, revision, path, readme.name, content.text) : '';
  return html`${folderListing(repo, revision, path, entries, submodules)}${readmeHtml}`;
}
