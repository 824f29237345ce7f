import { readGitRecords } from './bounded.ts';
import { diffArgs, type DiffSides } from './diff.ts';

/** One line of a hunk: added, removed, context, or git's "\ No newline at end of file". */
export interface PatchLine {
  kind: 'add' | 'del' | 'context' | 'note';
  text: string;
  /** Its number in the old file (removed and context lines). */
  old?: number;
  /** Its number in the new file (added and context lines). */
  new?: number;
}

/** A hunk: its `@@ -a,b +c,d @@` header and its lines. */
export interface Hunk {
  header: string;
  lines: PatchLine[];
}

/** One file of a patch, in the order git prints them (the order of `changedFiles`). */
export interface PatchFile {
  /** git's extended header lines that matter to a reader: modes, similarity, "Binary files … differ". */
  notes: string[];
  binary: boolean;
  hunks: Hunk[];
}

/** How much of a patch a page reads at most. */
export interface PatchLimits {
  files: number;
  lines: number;
  bytes: number;
}

/** The default bounds: a page of a huge commit stays small and quick. */
export const PATCH_LIMITS: PatchLimits = { files: 300, lines: 5000, bytes: 1024 * 1024 };

/** The part of a patch that was read. */
export interface Patch {
  files: PatchFile[];
  /** False when a limit (or the time allowed) stopped the reading: the last file may be cut. */
  complete: boolean;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;
// A new or deleted file's mode is left out: the file's status says it.
const KEPT_NOTES = /^(old mode|new mode|similarity index|dissimilarity index|copy from|copy to|rename from|rename to)\b/;

/** Reads git's own patch (`diff-tree -p`) between two commits, line by line, stopping at `limits`. */
export async function readPatch(dir: string, sides: DiffSides, limits: PatchLimits = PATCH_LIMITS): Promise<Patch> {
  const files: PatchFile[] = [];
  let file: PatchFile | null = null;
  let hunk: Hunk | null = null;
  let oldNo = 0;
  let newNo = 0;
  let lines = 0;
  let bytes = 0;
  const end = await readGitRecords(
    diffArgs(sides, ['-p']),
    '\n',
    (line) => {
      bytes += line.length + 1;
      if (bytes > limits.bytes) return false;
      if (line.startsWith('diff --git ')) {
        if (files.length >= limits.files) return false;
        file = { notes: [], binary: false, hunks: [] };
        files.push(file);
        hunk = null;
        return;
      }
      if (!file) return;
      // A hunk header opens a hunk: in the extended header, or within a hunk (where "---" and "+++" are content).
      const start = HUNK.exec(line);
      if (start) {
        hunk = { header: line, lines: [] };
        file.hunks.push(hunk);
        oldNo = Number(start[1]);
        newNo = Number(start[2]);
        return;
      }
      if (!hunk) {
        // The extended header, until the first hunk.
        if (line.startsWith('Binary files ')) file.binary = true;
        else if (KEPT_NOTES.test(line)) file.notes.push(line);
        return;
      }
      if (++lines > limits.lines) return false;
      const mark = line[0];
      const text = line.slice(1);
      if (mark === '+') hunk.lines.push({ kind: 'add', text, new: newNo++ });
      else if (mark === '-') hunk.lines.push({ kind: 'del', text, old: oldNo++ });
      else if (mark === '\\') hunk.lines.push({ kind: 'note', text: line.slice(2) });
      else hunk.lines.push({ kind: 'context', text, old: oldNo++, new: newNo++ });
    },
    { cwd: dir },
  );
  return { files, complete: !end.stopped };
}
