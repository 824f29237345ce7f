import { git } from './run.ts';

/** What a page's address names: a branch, a tag or a commit, and the commit it stands for. */
export interface Revision {
  /** As the address spelled it: `main`, `feature/x`, `v1.0`, or a (possibly abbreviated) commit id. */
  name: string;
  kind: 'branch' | 'tag' | 'commit';
  /** The full id of the commit (a tag is peeled to its commit). */
  commit: string;
}

const HEX = /^[0-9a-f]{4,64}$/i;

/**
 * The segments of a path from an address, or null when one could escape or be read as
 * something else: empty, `.`, `..`, a NUL or other control character, a backslash, or a
 * leading `-` (never passed to git as an option). Such an address is a 404.
 */
export function safeSegments(path: string): string[] | null {
  if (path === '') return [];
  const segments = path.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..' || s.startsWith('-') || s.includes('\\') || /[\x00-\x1f\x7f]/.test(s)) return null;
  }
  return segments;
}

const FORMAT = ['%(refname)', '%(objecttype)', '%(objectname)', '%(*objecttype)', '%(*objectname)'].join('%1f');

/** Branches and tags whose first name component is `first` (a for-each-ref pattern matches by whole components). */
async function refsStartingWith(dir: string, first: string): Promise<Map<string, string>> {
  const out = await git(['for-each-ref', `--format=${FORMAT}`, `refs/heads/${first}`, `refs/tags/${first}`], { cwd: dir });
  const found = new Map<string, string>();
  for (const line of out.split('\n').filter(Boolean)) {
    const [ref, type, id, peeledType, peeled] = line.split('\x1f');
    if (type === 'commit') found.set(ref, id);
    else if (peeledType === 'commit') found.set(ref, peeled);
  }
  return found;
}

/** The full id of the commit an abbreviated or full id names, or null. */
async function commitById(dir: string, id: string): Promise<string | null> {
  if (!HEX.test(id)) return null;
  try {
    return (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${id}^{commit}`], { cwd: dir })).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Splits `segments` into the longest branch or tag name they start with (a branch wins
 * over a tag of the same name, as on other forges) and the path after it; else, a commit
 * id in the first segment. Null when none names a commit of the repository in `dir`.
 */
export async function splitRevisionPath(dir: string, segments: string[]): Promise<{ revision: Revision; path: string[] } | null> {
  if (segments.length === 0 || segments.some((s) => safeSegments(s) === null)) return null;
  const refs = await refsStartingWith(dir, segments[0]);
  for (let n = segments.length; n >= 1; n--) {
    const name = segments.slice(0, n).join('/');
    for (const [prefix, kind] of [
      ['refs/heads/', 'branch'],
      ['refs/tags/', 'tag'],
    ] as const) {
      const commit = refs.get(prefix + name);
      if (commit) return { revision: { name, kind, commit }, path: segments.slice(n) };
    }
  }
  const commit = await commitById(dir, segments[0]);
  return commit ? { revision: { name: segments[0], kind: 'commit', commit }, path: segments.slice(1) } : null;
}

/** The revision a whole name stands for (a branch, a tag, or a commit id), or null. */
export async function resolveRevision(dir: string, name: string): Promise<Revision | null> {
  const segments = safeSegments(name);
  if (!segments || segments.length === 0) return null;
  const split = await splitRevisionPath(dir, segments);
  return split && split.path.length === 0 ? split.revision : null;
}
