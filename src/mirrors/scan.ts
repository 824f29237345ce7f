import { git, gitBuffer } from '../git/run.ts';
import { GITMODULES_DIFF, gitmodulesBlobs, gitmodulesMessage, submoduleUrlProblem, submoduleUrls, URL_CONFIG } from '../git/gitmodules.ts';
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
 * the sync brings. Returns the refusal's message, or null.
 */
export async function newGitmodulesProblem(dir: string, updates: RefUpdate[], visible: Map<string, string>): Promise<string | null> {
  const input = newHistory(updates, visible);
  if (!input) return null;
  const commits = await gitBuffer(['rev-list', '--stdin'], input, { cwd: dir });
  if (commits.length === 0) return null;
  const diff = (await gitBuffer(GITMODULES_DIFF, commits, { cwd: dir })).toString('utf8');
  for (const blob of gitmodulesBlobs(diff)) {
    const [config, ...rest] = URL_CONFIG;
    const text = await git([config, '--blob', blob, ...rest], { cwd: dir }).catch(() => '');
    for (const [name, url] of submoduleUrls(text)) {
      const problem = submoduleUrlProblem(url);
      if (problem) return gitmodulesMessage(blob, name, url, problem);
    }
  }
  return null;
}

/** The LFS pointers among the objects of a sync's new history (blobs the repository did not reach before). */
export async function newLfsPointers(dir: string, updates: RefUpdate[], visible: Map<string, string>): Promise<LfsPointer[]> {
  const input = newHistory(updates, visible);
  return input ? reachableLfsPointers(dir, ['--stdin'], input) : [];
}
