import { git } from './run.ts';
import { readGitRecords } from './bounded.ts';

/** One commit of a log: enough for a row. */
export interface LogEntry {
  sha: string;
  author: string;
  /** Author time, epoch ms. */
  time: number;
  subject: string;
}

const LOG_FORMAT = '%H%x1f%an%x1f%at%x1f%s%x1e';

function parseLog(out: string): LogEntry[] {
  return out
    .split('\x1e')
    .map((chunk) => chunk.replace(/^\n/, ''))
    .filter(Boolean)
    .map((chunk) => {
      const [sha, author, time, subject] = chunk.split('\x1f');
      return { sha, author, time: Number(time) * 1000, subject: subject ?? '' };
    });
}

/**
 * Up to `count` commits reachable from `tips` and from none of `hidden`, newest first,
 * after skipping `skip` of them: one git, which stops walking once it has printed them.
 * Every argument is a full commit id (never read as an option).
 */
export async function listCommits(dir: string, tips: string[], options: { hidden?: string[]; skip?: number; count: number }): Promise<LogEntry[]> {
  const args = ['log', `--format=${LOG_FORMAT}`, `-n${options.count}`];
  if (options.skip) args.push(`--skip=${options.skip}`);
  args.push('--end-of-options', ...tips, ...(options.hidden ?? []).map((sha) => `^${sha}`), '--');
  return parseLog(await git(args, { cwd: dir }));
}

/** A person and the time of their part in a commit. */
export interface Signature {
  name: string;
  email: string;
  /** Epoch ms. */
  time: number;
}

/** A commit as its page shows it. */
export interface CommitDetails {
  sha: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  subject: string;
  /** The message after the subject line, trimmed. */
  body: string;
  /** The message was longer than the page reads and is cut. */
  cut: boolean;
}

/** The longest message a commit page reads. */
const MESSAGE_LIMIT = 256 * 1024;

/** A commit's message, people and parents; `sha` is a full commit id the caller resolved. */
export async function commitDetails(dir: string, sha: string): Promise<CommitDetails> {
  let out = '';
  let cut = false;
  await readGitRecords(
    ['log', '-1', '--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%B', '--end-of-options', sha, '--'],
    '\n',
    (line) => {
      out += `${line}\n`;
      if (out.length > MESSAGE_LIMIT) {
        cut = true;
        return false;
      }
    },
    { cwd: dir },
  );
  const [id, parents, an, ae, at, cn, ce, ct, ...message] = out.split('\0');
  const text = message.join('\0').replace(/\s+$/, '');
  const newline = text.indexOf('\n');
  return {
    sha: id,
    parents: parents.split(' ').filter(Boolean),
    author: { name: an, email: ae, time: Number(at) * 1000 },
    committer: { name: cn, email: ce, time: Number(ct) * 1000 },
    subject: newline < 0 ? text : text.slice(0, newline),
    body: newline < 0 ? '' : text.slice(newline + 1).replace(/^\s*\n/, ''),
    cut,
  };
}

/** The best common ancestor of two commits, or null when their histories never meet. */
export async function mergeBase(dir: string, a: string, b: string): Promise<string | null> {
  try {
    return (await git(['merge-base', '--end-of-options', a, b], { cwd: dir })).trim() || null;
  } catch {
    return null; // exit 1: no common ancestor
  }
}

/** A branch or tag with the commit it names. */
export interface RefEntry {
  name: string;
  /** The commit (a tag peeled to it); null for a tag of a tree or a blob. */
  commit: string | null;
  /** The commit's time for a branch, the tag's own time for an annotated tag; epoch ms. */
  time: number | null;
  subject: string;
}

const REF_FORMAT = ['%(refname)', '%(objecttype)', '%(objectname)', '%(*objecttype)', '%(*objectname)', '%(creatordate:unix)', '%(contents:subject)'].join(
  '%1f',
);

/**
 * The full names of every branch (`refs/heads/`) or tag (`refs/tags/`), in the order the
 * pages list them: branches by their commit's date, newest first; tags by version, highest
 * first (git's `version:refname`). Tags are not sorted by date: that reads every tag
 * object (60–100 ms for 7,000 tags, two thirds annotated), where names alone take a few ms.
 */
export async function listRefNames(dir: string, prefix: 'refs/heads/' | 'refs/tags/'): Promise<string[]> {
  const sort = prefix === 'refs/heads/' ? '--sort=-creatordate' : '--sort=-version:refname';
  return (await git(['for-each-ref', sort, '--format=%(refname)', prefix], { cwd: dir })).split('\n').filter(Boolean);
}

/** The branches and tags named (full names, as listRefNames gives them), in the order given: one git for all of them. */
export async function refEntries(dir: string, fullNames: string[]): Promise<RefEntry[]> {
  if (fullNames.length === 0) return [];
  // Each full name is a for-each-ref pattern matching itself (and refs below it, dropped here);
  // ref names hold no glob characters (git check-ref-format refuses them).
  const out = await git(['for-each-ref', `--format=${REF_FORMAT}`, ...fullNames], { cwd: dir });
  const found = new Map<string, RefEntry>();
  for (const line of out.split('\n').filter(Boolean)) {
    const [ref, type, id, peeledType, peeled, time, subject] = line.split('\x1f');
    const commit = type === 'commit' ? id : peeledType === 'commit' ? peeled : null;
    found.set(ref, { name: ref.replace(/^refs\/(heads|tags)\//, ''), commit, time: time ? Number(time) * 1000 : null, subject: subject ?? '' });
  }
  return fullNames.map((n) => found.get(n)).filter((e): e is RefEntry => e !== undefined);
}
