import { gitBuffer, gitPiped } from './run.ts';

/** A commit as push payloads describe it. */
export interface CommitInfo {
  id: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string };
}

/** Every ref of a repository and the object it points to. */
export async function refValues(dir: string): Promise<Map<string, string>> {
  const out = await gitBuffer(['for-each-ref', '--format=%(objectname) %(refname)'], '', { cwd: dir });
  const refs = new Map<string, string>();
  for (const line of out.toString('utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
  }
  return refs;
}

/** "1700000000 +0200" as ISO 8601 with that offset: 2023-11-14T22:13:20+02:00. */
export function gitTimeToIso(seconds: number, offset: string): string {
  const sign = offset[0] === '-' ? -1 : 1;
  const minutes = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(3, 5)));
  const local = new Date((seconds + minutes * 60) * 1000).toISOString().slice(0, 19);
  return `${local}${offset.slice(0, 3)}:${offset.slice(3, 5)}`;
}

/** Parses a raw commit object (as `git cat-file` prints it). */
export function parseCommit(id: string, raw: Buffer): CommitInfo {
  const text = raw.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2).replace(/\n+$/, '');
  const author = /^author (.*?) ?<([^>]*)> (-?\d+) ([+-]\d{4})$/m.exec(headers);
  return {
    id,
    message,
    timestamp: author ? gitTimeToIso(Number(author[3]), author[4]) : new Date(0).toISOString(),
    author: { name: author?.[1] ?? '', email: author?.[2] ?? '' },
  };
}

/**
 * Reads commits in one `git cat-file --batch`: each revision (a sha, or `<sha>^{commit}`
 * to peel tags) maps to its commit, or to null when it names no commit.
 */
export async function readCommits(dir: string, revisions: string[]): Promise<Map<string, CommitInfo | null>> {
  const result = new Map<string, CommitInfo | null>();
  if (revisions.length === 0) return result;
  const out = await gitBuffer(['cat-file', '--batch'], revisions.join('\n') + '\n', { cwd: dir });
  let at = 0;
  for (const rev of revisions) {
    const eol = out.indexOf(0x0a, at);
    const header = out.toString('utf8', at, eol).split(' ');
    at = eol + 1;
    if (header.length !== 3) {
      result.set(rev, null); // "<rev> missing" or "ambiguous"
      continue;
    }
    const size = Number(header[2]);
    result.set(rev, header[1] === 'commit' ? parseCommit(header[0], out.subarray(at, at + size)) : null);
    at += size + 1;
  }
  return result;
}

/**
 * The commit each revision peels to (`<sha>^{commit}`), from one `git cat-file
 * --batch-check` (no object is read): revision → commit id, or null when it names none.
 */
export async function peelCommits(dir: string, revisions: string[]): Promise<Map<string, string | null>> {
  const result = new Map<string, string | null>();
  if (revisions.length === 0) return result;
  const out = (
    await gitBuffer(['cat-file', '--batch-check=%(objectname) %(objecttype)'], revisions.map((r) => `${r}^{commit}`).join('\n') + '\n', { cwd: dir })
  )
    .toString('utf8')
    .split('\n');
  revisions.forEach((rev, i) => {
    const [id, type] = (out[i] ?? '').split(' ');
    result.set(rev, type === 'commit' ? id : null);
  });
  return result;
}

/** Commits new to a repository, oldest first (parents before children), with their parents. */
export interface NewCommits {
  ids: string[];
  index: Map<string, number>;
  /** Parents of ids[i] as indexes into ids; -1 for a parent that is not new. */
  parents: number[][];
  /** Parents of ids[i] as shas (the old ones are where a walk leaves the new history). */
  parentIds: string[][];
}

/** Commits reachable from `tips` and from none of `exclude`, in one rev-list fed on stdin. */
export async function newCommits(dir: string, tips: string[], exclude: string[]): Promise<NewCommits> {
  const found: NewCommits = { ids: [], index: new Map(), parents: [], parentIds: [] };
  if (tips.length === 0) return found;
  const input = [...tips, ...exclude.map((sha) => `^${sha}`)].join('\n') + '\n';
  let rest = '';
  const take = (line: string) => {
    if (!line) return;
    const [id, ...parents] = line.split(' ');
    found.index.set(id, found.ids.length);
    found.ids.push(id);
    found.parentIds.push(parents);
  };
  await gitPiped(
    ['rev-list', '--reverse', '--topo-order', '--parents', '--stdin'],
    input,
    (chunk) => {
      const lines = (rest + chunk.toString('latin1')).split('\n');
      rest = lines.pop()!;
      for (const line of lines) take(line);
    },
    { cwd: dir },
  );
  take(rest);
  // Parents always come before children here, so every new parent is already indexed.
  found.parents = found.parentIds.map((ps) => ps.map((p) => found.index.get(p) ?? -1));
  return found;
}
