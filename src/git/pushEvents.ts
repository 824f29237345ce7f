import { execFile } from 'node:child_process';
import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { repositoryPayload, senderPayload } from '../events/common.ts';
import type { NewEvent } from '../events/types.ts';
import { repoDir } from './bare.ts';
import type { RefUpdate } from './pushJournal.ts';
import { newCommits, readCommits, refValues, type CommitInfo, type NewCommits } from './objects.ts';
import { gitEnv, SAFE_GIT_OPTIONS } from './run.ts';

/** The all-zero object id git uses for a ref that did not exist or no longer does. */
export const ZERO_ID = '0000000000000000000000000000000000000000';

/** At most this many commits are listed per push event (SPEC §6). */
export const MAX_COMMITS = 2048;

/** True for the all-zero id: a ref created (before) or deleted (after). */
export const isZero = (sha: string) => /^0+$/.test(sha);

/** What one ref update reaches among the new commits: indexes, oldest first. */
function reach(graph: NewCommits, start: number, stamp: Uint32Array, generation: number): Int32Array {
  const found: number[] = [];
  const stack = [start];
  stamp[start] = generation;
  while (stack.length > 0) {
    const i = stack.pop()!;
    found.push(i);
    for (const p of graph.parents[i]) {
      if (p >= 0 && stamp[p] !== generation) {
        stamp[p] = generation;
        stack.push(p);
      }
    }
  }
  // Indexes follow rev-list's oldest-first topological order.
  return Int32Array.from(found).sort();
}

/** True when `ancestor` is an ancestor of (or equal to) `descendant`; false when git cannot tell. */
function isAncestor(dir: string, ancestor: string, descendant: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('git', [...SAFE_GIT_OPTIONS, 'merge-base', '--is-ancestor', ancestor, descendant], { cwd: dir, env: gitEnv() }, (err) => resolve(!err));
  });
}

/** Runs `fn` over items with at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  });
  await Promise.all(lanes);
}

/**
 * Builds one `push` event per ref update (SPEC §6). `commits` are those reachable from
 * `after` and from no ref as it was before the push: the refs after the push (`refsAfter`,
 * as the push journal recorded them, else today's) with each updated ref at its old value.
 * The updated refs' values after the push are never read, so without `refsAfter` it may
 * run just before or just after the refs move. The new objects must be in the repository. Git is run a fixed number of times whatever the number
 * of refs or commits: for-each-ref, cat-file, one rev-list, cat-file again; only a forced
 * check that the new history cannot answer costs a merge-base per ref.
 * Also used for pull-request merges.
 */
export async function pushEventsFor(
  services: { config: Config },
  repo: Repository,
  sender: { id: number; login: string } | null,
  updates: RefUpdate[],
  refsAfter?: Map<string, string>,
): Promise<NewEvent[]> {
  if (updates.length === 0) return [];
  const dir = repoDir(services.config.reposDir, repo.org, repo.name);
  const updated = new Set(updates.map((u) => u.ref));
  // The refs as they were before the push: today's values, with each updated ref at its old value.
  const live = updates.filter((u) => !isZero(u.after));
  const [refs, heads] = await Promise.all([refsAfter ?? refValues(dir), readCommits(dir, [...new Set(live.map((u) => `${u.after}^{commit}`))])]);
  const before = new Set<string>();
  for (const [ref, sha] of refs) if (!updated.has(ref)) before.add(sha);
  for (const u of updates) if (!isZero(u.before)) before.add(u.before);
  const headOf = (u: RefUpdate) => (isZero(u.after) ? null : heads.get(`${u.after}^{commit}`) ?? null);
  const tips = [...new Set(live.map((u) => headOf(u)?.id).filter((id): id is string => Boolean(id)))];
  const graph = await newCommits(dir, tips, [...before]);

  const stamp = new Uint32Array(graph.ids.length);
  const listedBefore = new Uint8Array(graph.ids.length);
  const plans = updates.map((u, n) => {
    const head = headOf(u);
    const start = head ? graph.index.get(head.id) : undefined;
    const all = start === undefined ? new Int32Array(0) : reach(graph, start, stamp, n + 1);
    const listed = Array.from(all.subarray(Math.max(0, all.length - MAX_COMMITS)));
    const distinct = listed.map((i) => !listedBefore[i]);
    for (const i of listed) listedBefore[i] = 1;
    // A fast-forward usually shows itself: the old value is a parent of a new commit, or the new head.
    let forced: boolean | undefined = isZero(u.before) || isZero(u.after) ? false : undefined;
    if (forced === undefined && head && (head.id === u.before || Array.from(all).some((i) => graph.parentIds[i].includes(u.before)))) forced = false;
    return { update: u, head, total: all.length, listed, distinct, forced: forced as boolean | undefined };
  });
  const undecided = plans.filter((p) => p.forced === undefined);
  const [details] = await Promise.all([
    readCommits(dir, [...new Set(plans.flatMap((p) => p.listed.map((i) => graph.ids[i])))]),
    eachLimited(undecided, 4, async (p) => {
      p.forced = !(await isAncestor(dir, p.update.before, p.update.after));
    }),
  ]);
  const base = `${services.config.baseUrl}/${repo.org}/${repo.name}/commit/`;
  const present = (c: CommitInfo, distinct: boolean) => ({ id: c.id, message: c.message, timestamp: c.timestamp, url: base + c.id, distinct, author: c.author });
  const repository = repositoryPayload(services.config, repo);
  return plans.map((p) => {
    const commits = p.listed.map((i, k) => present(details.get(graph.ids[i])!, p.distinct[k]));
    const headListed = commits.find((c) => c.id === p.head?.id);
    return {
      repositoryId: repo.id,
      type: 'push' as const,
      ref: p.update.ref,
      senderId: sender?.id ?? null,
      payload: {
        event: 'push',
        ref: p.update.ref,
        before: p.update.before,
        after: p.update.after,
        created: isZero(p.update.before),
        deleted: isZero(p.update.after),
        forced: p.forced!,
        commits,
        total_commits: p.total,
        head_commit: p.head ? present(p.head, headListed?.distinct ?? false) : null,
        repository,
        sender: senderPayload(sender),
      },
    };
  });
}
