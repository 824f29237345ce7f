import { gitBuffer, gitPiped } from './run.ts';

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
