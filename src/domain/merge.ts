import type { Services } from '../services.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { findPull, synchronizePulls, type PullRequest } from './pulls.ts';
import { branchCommit, dirOf } from './refs.ts';
import { lockRepository } from './batch.ts';
import { withEvents } from './produce.ts';
import { producerEvent } from './payloads/index.ts';
import { pushEventsFor } from './pushEvents.ts';
import { git, gitExitCode } from '../git/run.ts';
import { conflict } from '../errors/wharfError.ts';

/** What a merge did: the new tip of the base branch and how it got there. */
export interface MergeResult {
  pull: PullRequest;
  sha: string;
  fastForward: boolean;
}

/** True when `ancestor` is reachable from `descendant` (equal included). */
async function isAncestor(dir: string, ancestor: string, descendant: string): Promise<boolean> {
  try {
    await git(['merge-base', '--is-ancestor', ancestor, descendant], { cwd: dir });
    return true;
  } catch (err) {
    if (gitExitCode(err) === 1) return false; // git's answer "no"; anything else is a real failure
    throw err;
  }
}

/** True when the two commits have a common ancestor (git merge-base's exit status 1 is "none"). */
async function shareHistory(dir: string, a: string, b: string): Promise<boolean> {
  try {
    await git(['merge-base', a, b], { cwd: dir });
    return true;
  } catch (err) {
    if (gitExitCode(err) === 1) return false;
    throw err;
  }
}

/** The tree of merging `head` into `base` (written without a work tree: git ≥ 2.38 `merge-tree --write-tree`), or null when they conflict. */
async function mergedTree(dir: string, base: string, head: string): Promise<string | null> {
  try {
    return (await git(['merge-tree', '--write-tree', '--no-messages', base, head], { cwd: dir })).split('\n')[0].trim();
  } catch (err) {
    // Exit status 1 is merge-tree's "the merge has conflicts"; other codes are failures.
    if (gitExitCode(err) === 1) return null;
    throw err;
  }
}

/**
 * Writes a merge commit of `head` into `base`, or a 409 when the branches conflict.
 * Nothing points at the new commit yet; the caller moves the branch.
 */
async function writeMergeCommit(dir: string, pull: PullRequest, base: string, head: string, sender: User, host: string): Promise<string> {
  const tree = await mergedTree(dir, base, head);
  if (tree === null) throw conflict(`Pull request #${pull.number} has conflicts with ${pull.base_ref}`);
  const who = { name: sender.login, email: `${sender.login}@users.noreply.${host}` };
  const env = { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email };
  const message = `Merge pull request #${pull.number} from ${pull.head_ref}\n\n${pull.title}\n`;
  return (await git(['commit-tree', tree, '-p', base, '-p', head, '-m', message], { cwd: dir, env })).trim();
}

/** What a merge of a pull request would do now, by the same checks as mergePull, in its order. */
export type MergeState =
  | { kind: 'merged' }
  | { kind: 'closed' }
  | { kind: 'branch_missing'; branch: string }
  | { kind: 'up_to_date' }
  | { kind: 'unrelated' }
  | { kind: 'conflicts' }
  | { kind: 'mergeable'; fastForward: boolean; head: string; base: string };

/**
 * Whether mergePull would merge the pull request now and how (without moving anything):
 * already merged, closed, a branch gone, nothing to merge, no shared history, conflicts, or mergeable (a
 * fast-forward or a merge commit), with the tips it would merge.
 */
export async function mergeState(services: Services, repo: Repository, pull: PullRequest): Promise<MergeState> {
  if (pull.merged) return { kind: 'merged' };
  if (pull.state !== 'open') return { kind: 'closed' };
  const { config } = services;
  const dir = dirOf(config, repo);
  const [head, base] = await Promise.all([branchCommit(config, repo, pull.head_ref), branchCommit(config, repo, pull.base_ref)]);
  if (!head || !base) return { kind: 'branch_missing', branch: !head ? pull.head_ref : pull.base_ref };
  if (await isAncestor(dir, head, base)) return { kind: 'up_to_date' };
  if (await isAncestor(dir, base, head)) return { kind: 'mergeable', fastForward: true, head, base };
  if (!(await shareHistory(dir, base, head))) return { kind: 'unrelated' };
  return (await mergedTree(dir, base, head)) === null ? { kind: 'conflicts' } : { kind: 'mergeable', fastForward: false, head, base };
}

/**
 * Merges a pull request in the bare repository: a fast-forward when the base has not
 * moved past the head's fork point, a merge commit otherwise. Raises `pull_request
 * closed` (merged) and a `push` on the base branch in one transaction whose last step
 * moves the branch with its old value checked, so a concurrent push makes it a 409
 * and nothing is recorded. A crash between the ref update and the commit would leave
 * the branch moved without the events; the window is one statement wide.
 * Undefined when there is no such pull request.
 */
export async function mergePull(
  services: Services,
  repo: Repository,
  sender: User,
  number: number,
  expectedHeadSha?: string,
): Promise<MergeResult | undefined> {
  const { config } = services;
  const pull = await findPull(services.db, repo, number);
  if (!pull) return undefined;
  if (pull.merged) throw conflict(`Pull request #${number} is already merged`);
  if (pull.state !== 'open') throw conflict(`Pull request #${number} is closed`);
  const dir = dirOf(config, repo);
  const head = await branchCommit(config, repo, pull.head_ref);
  const base = await branchCommit(config, repo, pull.base_ref);
  if (!head || !base) throw conflict(`Branch ${!head ? pull.head_ref : pull.base_ref} no longer exists`);
  if (expectedHeadSha !== undefined && expectedHeadSha !== head) throw conflict('Head branch was modified; review and try the merge again');
  if (await isAncestor(dir, head, base)) throw conflict(`${pull.base_ref} already contains every commit of ${pull.head_ref}`);
  const fastForward = await isAncestor(dir, base, head);
  // merge-tree refuses unrelated histories with a failure, not its "conflicts" answer: said first, as a conflict.
  if (!fastForward && !(await shareHistory(dir, base, head))) throw conflict(`${pull.head_ref} and ${pull.base_ref} share no history`);
  const sha = fastForward ? head : await writeMergeCommit(dir, pull, base, head, sender, new URL(config.baseUrl).hostname);
  const ref = `refs/heads/${pull.base_ref}`;
  // Computed before the ref moves, while every other ref is as it was "before the push".
  const pushEvents = await pushEventsFor(services, repo, sender, [{ before: base, after: sha, ref }]);
  const merged = await withEvents(services, async (trx, raise) => {
    await lockRepository(trx, repo.id);
    const now = Date.now();
    const changed = await trx('pull_requests')
      .where({ issue_id: pull.id, merged: false })
      .update({ merged: true, merged_at: now, merge_commit_sha: sha, head_sha: head, base_sha: base });
    if (changed !== 1) throw conflict(`Pull request #${number} is already merged`);
    await trx('issues').where('id', pull.id).update({ state: 'closed', closed_at: now, updated_at: now });
    const after = (await findPull(trx, repo, number))!;
    raise(producerEvent(config, 'pull_request', 'closed', repo, sender, after), ...pushEvents);
    // The merge is a push to the base branch: pull requests whose head or base it is follow it, in this transaction.
    raise(...(await synchronizePulls(trx, config, repo, sender, [{ after: sha, ref }])));
    try {
      await git(['update-ref', '-m', `merge pull request #${number}`, ref, sha, base], { cwd: dir });
    } catch {
      throw conflict(`${pull.base_ref} moved during the merge; try again`);
    }
    return after;
  });
  return { pull: merged, sha, fastForward };
}
