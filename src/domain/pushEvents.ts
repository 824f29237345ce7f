import type { Config } from '../config.ts';
import type { Repository } from './repos.ts';
import { organizationPayload, repositoryPayload, senderPayload } from './payloads/common.ts';
import type { NewEvent } from '../events/types.ts';
import type { PushPayload } from './payloads/schemas/push.ts';
import { repoDir } from '../git/bare.ts';
import { isZero, type RefUpdate } from '../git/refUpdate.ts';
import { newCommits, peelCommits, refValues, type NewCommits } from '../git/objects.ts';
import { readCommits, type CommitInfo, type CommitReader } from '../git/commitReader.ts';
import { gitSucceeds } from '../git/run.ts';

/** The all-zero object id git uses for a ref that did not exist or no longer does. */
export const ZERO_ID = '0000000000000000000000000000000000000000';

/** At most this many commits are listed per push event (SPEC §6). */
export const MAX_COMMITS = 2048;

/** True for the refs that raise push events: branches and tags (SPEC §6, as GitHub and Gitea). */
export const raisesPushEvent = (ref: string) => ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/');

/** Lets other work run when the current step has held the event loop for a while. */
export function breather(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < 10) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

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
  return gitSucceeds(['merge-base', '--is-ancestor', ancestor, descendant], { cwd: dir });
}

/** One push event to be built: its ref update, head commit and the commits it lists (oldest first). */
export interface PlannedEvent {
  update: RefUpdate;
  headId: string | null;
  total: number;
  listed: string[];
  forced: boolean;
}

/**
 * Plans a push's events (SPEC §6): one per updated branch or tag, in ref order. A ref's
 * new commits are those reachable from `after` and from no ref as it was before the push:
 * the refs after the push (`refsAfter`, as the push record holds them, else today's) with
 * each updated ref at its old value. A commit is listed by the first event whose new
 * history reaches it and by no later one; `total` still counts them all. The plan
 * depends only on the updates, the refs and the objects, so planning a push again (after
 * a crash) lists exactly what it listed before. git runs a fixed number of times (a
 * cat-file check, one streamed rev-list), plus a merge-base per forced-looking ref; long
 * loops yield to the event loop.
 */
export async function planPush(config: Config, repo: Repository, updates: RefUpdate[], refsAfter?: Map<string, string>): Promise<PlannedEvent[]> {
  const raising = updates.filter((u) => raisesPushEvent(u.ref)).sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  if (raising.length === 0) return [];
  const dir = repoDir(config.reposDir, repo.org, repo.name);
  const updated = new Set(updates.map((u) => u.ref));
  const live = raising.filter((u) => !isZero(u.after));
  const [refs, heads] = await Promise.all([refsAfter ?? refValues(dir), peelCommits(dir, [...new Set(live.map((u) => u.after))])]);
  const before = new Set<string>();
  for (const [ref, sha] of refs) if (!updated.has(ref)) before.add(sha);
  for (const u of updates) if (!isZero(u.before)) before.add(u.before);
  const headOf = (u: RefUpdate) => (isZero(u.after) ? null : (heads.get(u.after) ?? null));
  const tips = [...new Set(live.map(headOf).filter((id): id is string => Boolean(id)))];
  const graph = await newCommits(dir, tips, [...before]);

  const pause = breather();
  const stamp = new Uint32Array(graph.ids.length);
  const claimed = new Uint8Array(graph.ids.length);
  const plans: PlannedEvent[] = [];
  const undecided: PlannedEvent[] = [];
  for (const [n, u] of raising.entries()) {
    await pause();
    const headId = headOf(u);
    const start = headId ? graph.index.get(headId) : undefined;
    const all = start === undefined ? new Int32Array(0) : reach(graph, start, stamp, n + 1);
    const fresh = Array.from(all).filter((i) => !claimed[i]);
    for (const i of all) claimed[i] = 1;
    // A fast-forward usually shows itself: the old value is a parent of a new commit, or the new head.
    let forced: boolean | undefined = isZero(u.before) || isZero(u.after) ? false : undefined;
    if (forced === undefined && headId && (headId === u.before || Array.from(all).some((i) => graph.parentIds[i].includes(u.before)))) forced = false;
    const plan = { update: u, headId, total: all.length, listed: fresh.slice(-MAX_COMMITS).map((i) => graph.ids[i]), forced: forced ?? false };
    if (forced === undefined) undecided.push(plan);
    plans.push(plan);
  }
  for (const p of undecided) p.forced = !(await isAncestor(dir, p.update.before, p.update.after));
  return plans;
}

/** Builds the `push` events of planned refs, reading only the commits they show (through `reader` when the caller keeps one open). */
export async function buildPushEvents(
  config: Config,
  repo: Repository,
  sender: { id: number; login: string } | null,
  plans: PlannedEvent[],
  reader?: CommitReader,
): Promise<NewEvent[]> {
  const dir = repoDir(config.reposDir, repo.org, repo.name);
  const ids = new Set<string>();
  for (const p of plans) {
    for (const id of p.listed) ids.add(id);
    if (p.headId) ids.add(p.headId);
  }
  const details = await (reader ? reader.read([...ids]) : readCommits(dir, [...ids]));
  const base = `${config.baseUrl}/${repo.org}/${repo.name}/commit/`;
  const present = (c: CommitInfo, distinct: boolean) => ({
    id: c.id,
    message: c.message,
    timestamp: c.timestamp,
    url: base + c.id,
    distinct,
    author: c.author,
  });
  const repository = repositoryPayload(config, repo);
  return plans.map((p) => {
    const head = p.headId ? (details.get(p.headId) ?? null) : null;
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
        forced: p.forced,
        commits: p.listed.map((id) => present(details.get(id)!, true)),
        total_commits: p.total,
        // The head is listed by this event or an earlier one of the push: distinct only here.
        head_commit: head ? present(head, p.listed.includes(head.id)) : null,
        repository,
        organization: organizationPayload(config, repo.org),
        sender: senderPayload(sender),
      } satisfies PushPayload,
    };
  });
}

/**
 * Builds every `push` event of a few ref updates at once (a pull-request merge, a
 * release's new tag); pushes go through the push recorder, chunk by chunk. The new
 * objects must be in the repository; the updated refs' new values are never read, so it
 * may run just before the refs move.
 */
export async function pushEventsFor(
  services: { config: Config },
  repo: Repository,
  sender: { id: number; login: string } | null,
  updates: RefUpdate[],
  refsAfter?: Map<string, string>,
): Promise<NewEvent[]> {
  return buildPushEvents(services.config, repo, sender, await planPush(services.config, repo, updates, refsAfter));
}
