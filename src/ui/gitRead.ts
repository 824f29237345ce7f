import { git } from '../git/run.ts';
import { listRefNames, refEntries } from '../git/history.ts';

/** A branch or tag: short name, the commit it names, and when that commit (or tag) was made. */
export interface RefInfo {
  name: string;
  sha: string;
  time: number | null;
  subject: string;
}

/** One commit of the recent history. */
export interface CommitInfo {
  sha: string;
  author: string;
  time: number;
  subject: string;
}

const SEP = '\x1f';

function parseRefs(out: string, prefix: string): RefInfo[] {
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref, sha, peeled, time, subject] = line.split(SEP);
      // An annotated tag names a tag object; show the commit it points at.
      return { name: ref.slice(prefix.length), sha: peeled || sha, time: time ? Number(time) * 1000 : null, subject: subject ?? '' };
    });
}

/**
 * Branches (all, newest first) and the first `shownTags` tags (highest version first, as
 * the tags page lists them) of a bare repository, with the number of tags: only the shown
 * tags' objects are read. Read-only; the caller has checked access.
 */
export async function readRefs(dir: string, shownTags: number): Promise<{ branches: RefInfo[]; tags: RefInfo[]; tagCount: number }> {
  const format = ['%(refname)', '%(objectname)', '%(*objectname)', '%(creatordate:unix)', '%(contents:subject)'].join('%1f');
  const [heads, tagNames] = await Promise.all([
    git(['for-each-ref', '--sort=-creatordate', `--format=${format}`, 'refs/heads/'], { cwd: dir }),
    listRefNames(dir, 'refs/tags/'),
  ]);
  const tags = (await refEntries(dir, tagNames.slice(0, shownTags))).map((t) => ({ name: t.name, sha: t.commit ?? '', time: t.time, subject: t.subject }));
  return { branches: parseRefs(heads, 'refs/heads/'), tags, tagCount: tagNames.length };
}

/** The latest commits of a branch (full ref name, so no name is read as an option). */
export async function recentCommits(dir: string, branch: string, count = 20): Promise<CommitInfo[]> {
  const out = await git(['log', `-n${count}`, `--format=%H${SEP}%an${SEP}%at${SEP}%s%x1e`, `refs/heads/${branch}`, '--'], { cwd: dir });
  return out
    .split('\x1e')
    .map((chunk) => chunk.trim())
    .filter(Boolean)
    .map((chunk) => {
      const [sha, author, time, subject] = chunk.split(SEP);
      return { sha, author, time: Number(time) * 1000, subject };
    });
}
