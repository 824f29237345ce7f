import type { Readable } from 'node:stream';
import { git, gitExitCode, gitPiped, startGit } from './run.ts';
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

/** An object looked up by path, with a blob's content when it is no larger than the cap asked for. */
export interface FoundObject {
  object: GitObject;
  /** The whole content of a blob of at most `contentCap` bytes; null otherwise. */
  content: Buffer | null;
}

/** The object spec of a path in a commit (segments already checked by safeSegments): the root tree for no path. */
function pathSpec(commit: string, path: string[]): string {
  return path.length ? `${commit}:${path.join('/')}` : `${commit}^{tree}`;
}

/**
 * The blob or tree at `path` in a commit, and a small blob's content, from one `cat-file
 * --batch` fed on stdin (so no part of the path is read as an option): git is stopped as
 * soon as the header shows the content is not wanted, so a huge blob is never read. Null
 * when nothing is there (a submodule's commit is not in this repository either).
 */
export async function objectAt(dir: string, commit: string, path: string[], contentCap = 0): Promise<FoundObject | null> {
  const { child, done } = startGit(['cat-file', '--batch'], { cwd: dir, input: `${pathSpec(commit, path)}\n` });
  let head = Buffer.alloc(0);
  let object: GitObject | null = null;
  const body: Buffer[] = [];
  let bodyBytes = 0;
  let result: FoundObject | null | undefined;
  const finish = (found: FoundObject | null) => {
    result = found;
    child.stdout.destroy();
    child.kill();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    if (result !== undefined) return;
    if (!object) {
      head = Buffer.concat([head, chunk]);
      const eol = head.indexOf(10);
      if (eol < 0) return;
      // "<id> <type> <size>"; anything else ("<spec> missing", "ambiguous") names nothing.
      const header = /^([0-9a-f]{40,64}) (blob|tree) (\d+)$/.exec(head.subarray(0, eol).toString('utf8'));
      if (!header) return finish(null);
      const [, id, type, size] = header;
      object = { id, type: type as GitObject['type'], size: type === 'blob' ? Number(size) : 0 };
      if (type !== 'blob' || object.size > contentCap) return finish({ object, content: null });
      chunk = head.subarray(eol + 1);
    }
    body.push(chunk);
    bodyBytes += chunk.length;
    // The content, then a newline.
    if (bodyBytes > object.size) finish({ object, content: Buffer.concat(body).subarray(0, object.size) });
  });
  await done;
  if (result === undefined) throw new Error(`git cat-file --batch ended before answering for ${pathSpec(commit, path)}`);
  return result;
}

/** A folder's entries from one `ls-tree -z --long` (never one git per entry): folders first, then by name. */
export async function listTree(dir: string, treeIsh: string): Promise<TreeEntry[]> {
  const out = await git(['ls-tree', '-z', '--long', '--end-of-options', treeIsh], { cwd: dir });
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

/** The entries of the folder at `path` in a commit, or null when git finds no folder there (a file, or nothing). */
export async function listFolderAt(dir: string, commit: string, path: string[]): Promise<TreeEntry[] | null> {
  try {
    return await listTree(dir, pathSpec(commit, path));
  } catch (err) {
    if (gitExitCode(err) !== undefined) return null;
    throw err;
  }
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
