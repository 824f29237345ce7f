import { git, gitExitCode } from '../git/run.ts';

/** One commit of a pull request. */
export interface PullCommit {
  sha: string;
  author: string;
  time: number;
  subject: string;
}

/** One file a pull request changes: its path and the lines added and removed (null for a binary file). */
export interface ChangedFile {
  path: string;
  added: number | null;
  removed: number | null;
}

/** At most this many commits and files are read for a pull request page; the rest are on the compare page. */
export const PULL_READ_LIMIT = 250;

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function requireIds(...ids: string[]): void {
  // Only full object ids reach git here (a branch's tip, or a sha the database recorded), so none can be read as an option.
  for (const id of ids) if (!OBJECT_ID.test(id)) throw new Error(`not an object id: ${id}`);
}

/** The commits of `head` that `base` lacks (git log base..head), oldest first: the newest PULL_READ_LIMIT of them, and whether there were more. */
export async function pullCommits(dir: string, base: string, head: string): Promise<{ commits: PullCommit[]; more: boolean }> {
  requireIds(base, head);
  const out = await git(['log', `-n${PULL_READ_LIMIT + 1}`, '--format=%H%x1f%an%x1f%at%x1f%s%x1e', `${base}..${head}`, '--'], { cwd: dir });
  const commits = out
    .split('\x1e')
    .map((chunk) => chunk.trim())
    .filter(Boolean)
    .map((chunk) => {
      const [sha, author, time, subject] = chunk.split('\x1f');
      return { sha, author, time: Number(time) * 1000, subject };
    });
  const more = commits.length > PULL_READ_LIMIT;
  return { commits: commits.slice(0, PULL_READ_LIMIT).reverse(), more };
}

/** The commit `head` forked from `base` at, or null when they share no history (git merge-base's exit status 1). */
async function forkPoint(dir: string, base: string, head: string): Promise<string | null> {
  try {
    return (await git(['merge-base', base, head], { cwd: dir })).trim();
  } catch (err) {
    if (gitExitCode(err) === 1) return null;
    throw err;
  }
}

/** The files `head` changes since it forked from `base` (git diff --numstat of the fork point and head), in path order; null when they share no history. */
export async function pullFiles(dir: string, base: string, head: string): Promise<ChangedFile[] | null> {
  requireIds(base, head);
  const fork = await forkPoint(dir, base, head);
  if (fork === null) return null;
  const out = await git(['diff', '--numstat', '-z', '--no-renames', fork, head, '--'], { cwd: dir });
  const files: ChangedFile[] = [];
  for (const record of out.split('\0')) {
    const match = /^(-|\d+)\t(-|\d+)\t([\s\S]+)$/.exec(record);
    if (!match) continue;
    const count = (v: string) => (v === '-' ? null : Number(v));
    files.push({ path: match[3], added: count(match[1]), removed: count(match[2]) });
  }
  return files;
}
