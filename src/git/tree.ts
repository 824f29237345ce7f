import type { Readable } from 'node:stream';
import { git, gitBuffer, gitPiped, startGit } from './run.ts';
import { submoduleUrls } from './gitmodules.ts';

/** What a path names in a commit: its object id, type and size in bytes (0 for a tree). */
export interface GitObject {
  id: string;
  type: 'blob' | 'tree';
  size: number;
}

/** One entry of a folder as `ls-tree --long` lists it. */
export interface TreeEntry {
  name: string;
  /** 040000 a folder, 100644/100755 a file, 120000 a symbolic link, 160000 a submodule. */
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  id: string;
  /** Blobs only; null for folders and submodules. */
  size: number | null;
}

/**
 * The blob or tree at `path` (segments already checked by safeSegments) in a commit, read
 * by one `cat-file --batch-check` fed on stdin, so no part of the path is read as an
 * option; null when nothing is there (a submodule's commit is not in this repository either).
 */
export async function objectAt(dir: string, commit: string, path: string[]): Promise<GitObject | null> {
  const spec = path.length ? `${commit}:${path.join('/')}` : `${commit}^{tree}`;
  const out = (await gitBuffer(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], `${spec}\n`, { cwd: dir })).toString('utf8');
  const [id, type, size] = out.trim().split(' ');
  if (type !== 'blob' && type !== 'tree') return null;
  return { id, type, size: type === 'blob' ? Number(size) : 0 };
}

/** A folder's entries from one `ls-tree -z --long` (never one git per entry): folders first, then by name. */
export async function listTree(dir: string, tree: string): Promise<TreeEntry[]> {
  const out = await git(['ls-tree', '-z', '--long', '--end-of-options', tree], { cwd: dir });
  const entries: TreeEntry[] = [];
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, id, size] = record.slice(0, tab).split(/ +/);
    entries.push({ name: record.slice(tab + 1), mode, type: type as TreeEntry['type'], id, size: size === '-' ? null : Number(size) });
  }
  const rank = (e: TreeEntry) => (e.type === 'tree' ? 0 : 1);
  return entries.sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A blob's whole content; only for blobs whose size the caller has checked is small. */
export async function readBlob(dir: string, id: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await gitPiped(['cat-file', 'blob', id], null, (c) => chunks.push(c), { cwd: dir });
  return Buffer.concat(chunks);
}

/** A blob's content as a stream from `git cat-file blob` (never held whole); destroying it ends git. */
export function streamBlob(dir: string, id: string): Readable {
  const { child, done } = startGit(['cat-file', 'blob', id], { cwd: dir });
  // A git that failed after the answer began can only cut the body short.
  done.then(
    ({ code }) => code !== 0 && !child.stdout.readableEnded && child.stdout.destroy(new Error(`git cat-file blob ${id} exited ${code}`)),
    (err) => child.stdout.destroy(err),
  );
  // A reader that stopped early (the browser went away): git has nobody left to write to.
  child.stdout.on('close', () => !child.stdout.readableEnded && child.kill());
  return child.stdout;
}

/** The submodule URLs of a commit's `.gitmodules`, by path; empty when it has none or git cannot read it. */
export async function submodulesAt(dir: string, commit: string): Promise<Map<string, string>> {
  const text = await git(['config', '-z', '--blob', `${commit}:.gitmodules`, '--get-regexp', '^submodule\\..*\\.(path|url)$'], { cwd: dir }).catch(() => '');
  const paths = new Map<string, string>();
  const urls = new Map<string, string>();
  for (const [key, value] of submoduleUrls(text)) {
    // submoduleUrls strips ".url"; a ".path" key keeps its suffix.
    if (key.endsWith('.path')) paths.set(key.slice(0, -5), value);
    else urls.set(key, value);
  }
  const byPath = new Map<string, string>();
  for (const [name, url] of urls) byPath.set(paths.get(name) ?? name, url);
  return byPath;
}
