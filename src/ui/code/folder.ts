import type { Revision } from '../../git/revision.ts';
import { listTree, submodulesAt } from '../../git/tree.ts';
import { html, type SafeHtml } from '../html.ts';
import type { RepoRecord } from '../reader.ts';
import { findReadme, folderListing, readmeSection } from '../pages/codeTree.ts';
import { blobContent } from './content.ts';

/** A README larger than this is listed but not rendered below its folder. */
const README_LIMIT = 512 * 1024;

/**
 * A folder's listing and its README, from one `ls-tree` for the entries, one read for the
 * README and, only when the folder holds a submodule, one for `.gitmodules`. No "last commit
 * per file": on a large history that walk alone would take longer than the page may.
 */
export async function folderView(dir: string, repo: RepoRecord, revision: Revision, path: string[], tree: string): Promise<SafeHtml> {
  const entries = await listTree(dir, tree);
  const readme = findReadme(entries);
  const [submodules, content] = await Promise.all([
    entries.some((e) => e.type === 'commit') ? submodulesAt(dir, revision.commit) : new Map<string, string>(),
    readme && (readme.size ?? 0) <= README_LIMIT ? blobContent(dir, { id: readme.id, type: 'blob', size: readme.size ?? 0 }) : null,
  ]);
  const readmeHtml = readme && content?.kind === 'text' ? readmeSection(repo, revision, path, readme.name, content.text) : '';
  return html`${folderListing(repo, revision, path, entries, submodules)}${readmeHtml}`;
}
