import { readGitRecords } from './bounded.ts';

/**
 * The two sides of a diff, full commit ids. `base` null diffs the commit `head` against its
 * first parent (a merge too), or against nothing for a first commit, without the caller
 * reading its parents first.
 */
export interface DiffSides {
  base: string | null;
  head: string;
}

/** A changed file as `--raw` and `--numstat` tell it. */
export interface ChangedFile {
  /** A added, M modified, D deleted, R renamed, C copied, T type changed. */
  status: string;
  path: string;
  /** The path before a rename or copy. */
  oldPath?: string;
  /** Lines added and removed; null for a binary file, undefined past the listed limit. */
  added?: number | null;
  removed?: number | null;
}

/** The changed files of a diff, the first `limit` of them with their line counts. */
export interface ChangedFiles {
  files: ChangedFile[];
  /** Every changed file, or null when there were too many even to count. */
  total: number | null;
}

/** The arguments of a `diff-tree` between the two sides, with its output `format` options. */
export function diffArgs(sides: DiffSides, format: string[]): string[] {
  const common = ['diff-tree', '-r', '-M', '--no-color', '--no-commit-id', '--no-ext-diff', '--no-textconv', ...format];
  if (sides.base) return [...common, '--end-of-options', sides.base, sides.head, '--'];
  return [...common, '--root', '--diff-merges=first-parent', '--end-of-options', sides.head, '--'];
}

/** Files beyond which the list of changed files stops; the rest are only counted. */
const LISTED_FILES = 1000;
/** Changed files counted at most; a diff of more says "more than". */
const COUNTED_FILES = 200_000;

/**
 * The changed files between two commits with their status and line counts, in the order
 * the patch prints them (one git: `--raw` lists every file first, then `--numstat`
 * counts lines file by file, and git is stopped after the `limit`th).
 */
export async function changedFiles(dir: string, sides: DiffSides, limit = LISTED_FILES): Promise<ChangedFiles> {
  const files: ChangedFile[] = [];
  let total = 0;
  let counted = 0;
  // The -z records of --raw are ":modes ids STATUS" then one path, or two for R and C; those of --numstat are
  // "added\tremoved\tpath", or "added\tremoved\t" then the old and the new path.
  let expect: 'entry' | 'path' | 'old' | 'new' = 'entry';
  let current: ChangedFile | null = null;
  let paths = 0;
  let inNumstat = false;
  const end = await readGitRecords(
    diffArgs(sides, ['-z', '--raw', '--numstat']),
    '\0',
    (record) => {
      if (expect === 'entry') {
        if (!inNumstat && record.startsWith(':')) {
          total++;
          if (total > COUNTED_FILES) return false;
          const status = record.split(' ')[4] ?? '';
          current = total <= limit ? { status: status[0], path: '' } : null;
          if (current) files.push(current);
          paths = status[0] === 'R' || status[0] === 'C' ? 2 : 1;
          expect = 'path';
          return;
        }
        inNumstat = true;
        if (counted >= Math.min(limit, files.length)) return false;
        const [added, removed, path] = record.split('\t');
        current = files[counted++];
        current.added = added === '-' ? null : Number(added);
        current.removed = removed === '-' ? null : Number(removed);
        if (path === '') expect = 'old';
        return;
      }
      if (inNumstat) {
        expect = expect === 'old' ? 'new' : 'entry';
        return;
      }
      const file = current as ChangedFile | null;
      if (file && paths === 2 && file.oldPath === undefined) file.oldPath = record;
      else if (file) file.path = record;
      paths--;
      if (paths === 0) expect = 'entry';
    },
    { cwd: dir },
  );
  // Stopped while still listing --raw entries: the total is unknown.
  return { files, total: end.stopped && !inNumstat ? null : total };
}
