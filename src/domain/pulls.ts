import type { Knex } from 'knex';
import type { Services } from '../services.ts';
import type { Config } from '../config.ts';
import type { NewEvent } from '../events/types.ts';
import type { Db } from '../db/connect.ts';
import type { DbBool, DbInt } from '../db/rows.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { findIssue, insertIssue, listIssues, patchIssue, type Issue, type IssueState } from './issues.ts';
import { branchCommit } from './refs.ts';
import { withEvents } from './produce.ts';
import { producerEvent, type Sender } from './payloads/index.ts';
import { validationFailed } from '../errors/wharfError.ts';
import type { NewPull, PullPatch } from './inputs/pulls.ts';

/** A pull request: its `issues` row (kind 'pull') and the branches it merges. */
export interface PullRequest extends Issue {
  head_ref: string;
  head_sha: string;
  base_ref: string;
  base_sha: string;
  merged: boolean;
  merged_at: number | null;
  merge_commit_sha: string | null;
}

type Conn = Db | Knex.Transaction;

/** A `pull_requests` row as either driver gives it. */
interface PullRow {
  issue_id: number;
  head_ref: string;
  head_sha: string;
  base_ref: string;
  base_sha: string;
  merged: DbBool;
  merged_at: DbInt | null;
  merge_commit_sha: string | null;
}

async function withBranches(db: Conn, issues: Issue[]): Promise<PullRequest[]> {
  if (issues.length === 0) return [];
  const rows: PullRow[] = await db('pull_requests').whereIn(
    'issue_id',
    issues.map((i) => i.id),
  );
  const byId = new Map(rows.map((r) => [Number(r.issue_id), r] as const));
  return issues.map((issue) => {
    // Every pull request has its row (written with its issue in one transaction).
    const r = byId.get(issue.id)!;
    return {
      ...issue,
      head_ref: r.head_ref,
      head_sha: r.head_sha,
      base_ref: r.base_ref,
      base_sha: r.base_sha,
      merged: Boolean(r.merged),
      merged_at: r.merged_at === null ? null : Number(r.merged_at),
      merge_commit_sha: r.merge_commit_sha ?? null,
    };
  });
}

/** A pull request by number, or undefined. */
export async function findPull(db: Conn, repo: Repository, number: number): Promise<PullRequest | undefined> {
  const issue = await findIssue(db, repo, number, 'pull');
  return issue && (await withBranches(db, [issue]))[0];
}

/** A page of pull requests, newest first; with `merged`, only those merged (or not). */
export async function listPulls(
  db: Db,
  repo: Repository,
  options: { state: IssueState | 'all'; limit: number; before?: number; merged?: boolean },
): Promise<PullRequest[]> {
  return withBranches(db, await listIssues(db, repo, { kind: 'pull', ...options }));
}

/** The sha of an existing branch, or a 422 naming the field that named it. */
async function requireBranch(services: Services, repo: Repository, field: string, branch: string): Promise<string> {
  const sha = await branchCommit(services.config, repo, branch);
  if (!sha) throw validationFailed([{ path: `/${field}`, message: `branch ${branch} does not exist` }]);
  return sha;
}

/** Opens a pull request from `head` into `base` (both existing branches), raising `pull_request opened`. */
export async function createPull(services: Services, repo: Repository, author: User, input: NewPull): Promise<PullRequest> {
  const base = input.base ?? repo.default_branch;
  if (base === input.head) throw validationFailed([{ path: '/head', message: 'must differ from base' }]);
  const [headSha, baseSha] = [await requireBranch(services, repo, 'head', input.head), await requireBranch(services, repo, 'base', base)];
  return withEvents(services, async (trx, raise) => {
    const { id, number } = await insertIssue(trx, repo, author, { kind: 'pull', title: input.title, body: input.body });
    await trx('pull_requests').insert({ issue_id: id, head_ref: input.head, head_sha: headSha, base_ref: base, base_sha: baseSha, merged: false });
    const pull = (await findPull(trx, repo, number))!;
    raise(producerEvent(services.config, 'pull_request', 'opened', repo, author, pull));
    return pull;
  });
}

/** Changes a pull request's title, body, base or state, raising `edited`, `closed` or `reopened`; undefined when there is no such pull request. */
export async function updatePull(services: Services, repo: Repository, sender: User, number: number, patch: PullPatch): Promise<PullRequest | undefined> {
  const current = await findPull(services.db, repo, number);
  if (!current) return undefined;
  if (current.merged && patch.state === 'open') throw validationFailed([{ path: '/state', message: 'a merged pull request cannot be reopened' }]);
  const baseChanged = patch.base !== undefined && patch.base !== current.base_ref;
  if (baseChanged && patch.base === current.head_ref) throw validationFailed([{ path: '/base', message: 'must differ from head' }]);
  const baseSha = baseChanged ? await requireBranch(services, repo, 'base', patch.base!) : current.base_sha;
  return withEvents(services, async (trx, raise) => {
    const before = (await findPull(trx, repo, number))!;
    const { edited, stateAction } = await patchIssue(trx, before, { title: patch.title, body: patch.body, state: patch.state });
    if (baseChanged) await trx('pull_requests').where('issue_id', before.id).update({ base_ref: patch.base, base_sha: baseSha });
    const pull = (await findPull(trx, repo, number))!;
    if (edited || baseChanged) raise(producerEvent(services.config, 'pull_request', 'edited', repo, sender, pull));
    if (stateAction) raise(producerEvent(services.config, 'pull_request', stateAction, repo, sender, pull));
    return pull;
  });
}

/**
 * After a push, in the transaction that records the push's events: open pull requests
 * whose head branch moved get the new head sha and a `pull_request synchronize` event
 * (returned, for the caller to write in that same transaction); those whose base moved
 * get the new base sha silently (GitHub raises nothing for that either).
 */
export async function synchronizePulls(
  trx: Knex.Transaction,
  config: Config,
  repo: Repository,
  sender: Sender,
  updates: { after: string; ref: string }[],
): Promise<NewEvent[]> {
  const moved = new Map(
    updates.filter((u) => u.ref.startsWith('refs/heads/') && !/^0+$/.test(u.after)).map((u) => [u.ref.slice('refs/heads/'.length), u.after]),
  );
  if (moved.size === 0) return [];
  const rows = await trx('pull_requests as p')
    .join('issues as i', 'i.id', 'p.issue_id')
    .where({ 'i.repository_id': repo.id, 'i.state': 'open' })
    .where((q) => q.whereIn('p.head_ref', [...moved.keys()]).orWhereIn('p.base_ref', [...moved.keys()]))
    .select('p.issue_id', 'i.number', 'p.head_ref', 'p.head_sha', 'p.base_ref', 'p.base_sha');
  const events: NewEvent[] = [];
  for (const row of rows) {
    const head = moved.get(row.head_ref);
    const base = moved.get(row.base_ref);
    const update: Record<string, string> = {};
    if (head && head !== row.head_sha) update.head_sha = head;
    if (base && base !== row.base_sha) update.base_sha = base;
    if (Object.keys(update).length === 0) continue;
    await trx('pull_requests').where('issue_id', row.issue_id).update(update);
    await trx('issues').where('id', row.issue_id).update({ updated_at: Date.now() });
    if (update.head_sha) events.push(producerEvent(config, 'pull_request', 'synchronize', repo, sender, (await findPull(trx, repo, Number(row.number)))!));
  }
  return events;
}
