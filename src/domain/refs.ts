import type { Config } from '../config.ts';
import type { Repository } from './repos.ts';
import { repoDir } from '../git/bare.ts';
import { git } from '../git/run.ts';

/** Fixed value git uses for "no object": a created or deleted ref's other side. */
export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** Characters and sequences git forbids in ref names (git check-ref-format) that rev-parse would read as revision syntax. */
const REVISION_SYNTAX = /[~^:?*[\\\x00-\x20\x7f]|@\{|\.\./;

/** The bare directory of a repository. */
export function dirOf(config: Config, repo: Repository): string {
  return repoDir(config.reposDir, repo.org, repo.name);
}

/**
 * The commit a full ref name points to, or undefined when the ref does not exist.
 * The name always starts with `refs/`, so it can never be read as an option.
 */
export async function refCommit(config: Config, repo: Repository, fullRef: string): Promise<string | undefined> {
  // Revision syntax (main~1, main^{/text}, main@{1}, a:b) is not a ref name: refuse it rather than let git evaluate it.
  if (!fullRef.startsWith('refs/') || REVISION_SYNTAX.test(fullRef)) return undefined;
  try {
    return (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${fullRef}^{commit}`], { cwd: dirOf(config, repo) })).trim();
  } catch {
    return undefined; // no such ref (or not a commit): the caller answers 422
  }
}

/** The commit a branch points to, or undefined. */
export function branchCommit(config: Config, repo: Repository, branch: string): Promise<string | undefined> {
  return refCommit(config, repo, `refs/heads/${branch}`);
}

/** True when a full object id names a commit in the repository. */
export async function commitExists(config: Config, repo: Repository, sha: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) return false;
  try {
    await git(['cat-file', '-e', `${sha}^{commit}`], { cwd: dirOf(config, repo) });
    return true;
  } catch {
    return false;
  }
}

/** True when a full ref name is well formed by git's own rules (`git check-ref-format`). */
export async function isValidRefName(fullRef: string): Promise<boolean> {
  if (!fullRef.startsWith('refs/')) return false;
  try {
    await git(['check-ref-format', fullRef]);
    return true;
  } catch {
    return false;
  }
}
