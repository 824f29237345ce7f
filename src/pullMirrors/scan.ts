import { gitmodulesProblem } from '../git/gitmodules.ts';
import { reachableLfsPointers, type LfsPointer } from '../remote/lfsScan.ts';
import { isZero, type RefUpdate } from '../git/refUpdate.ts';

/** `rev-list --stdin` input naming a sync's new history: the new tips, not what the repository already shows. */
function newHistory(updates: RefUpdate[], visible: Map<string, string>): string | null {
  const tips = [...new Set(updates.filter((u) => !isZero(u.after)).map((u) => u.after))];
  if (tips.length === 0) return null;
  // git 2.39 takes no options in --stdin mode: the exclusions are "^<id>" lines.
  return [...tips, ...[...new Set(visible.values())].map((sha) => `^${sha}`)].join('\n') + '\n';
}

/**
 * SPEC §7.6 for a sync: the .gitmodules URLs a push would be refused for, in the commits
 * the sync brings (the import's scan, gitmodules.ts, over the new history alone). Returns
 * the refusal's message, or null.
 */
export async function newGitmodulesProblem(dir: string, updates: RefUpdate[], visible: Map<string, string>): Promise<string | null> {
  const input = newHistory(updates, visible);
  return input ? gitmodulesProblem(dir, { revs: ['--stdin'], input }) : null;
}

/** The LFS pointers among the objects of a sync's new history (blobs the repository did not reach before). */
export async function newLfsPointers(dir: string, updates: RefUpdate[], visible: Map<string, string>): Promise<LfsPointer[]> {
  const input = newHistory(updates, visible);
  return input ? reachableLfsPointers(dir, ['--stdin'], input) : [];
}
