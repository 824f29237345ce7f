import type { Knex } from 'knex';
import type { Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { lockRepository } from './batch.ts';
import { insertedId } from '../db/results.ts';
import { labelsOf, replaceLabels } from './labels.ts';
import { withEvents } from './produce.ts';
import { producerEvent } from './payloads/index.ts';
import { conflict } from '../errors/wharfError.ts';
import type { IssuePatch, NewIssue } from './inputs/issues.ts';

export type IssueState = 'open' | 'closed';
export type IssueKind = 'issue' | 'pull';

/** An issue or pull request as both share it: the `issues` row with its labels and author login. */
export interface Issue {
  id: number;
  repository_id: number;
  number: number;
  kind: IssueKind;
  title: string;
  body: string;
  state: IssueState;
  labels: string[];
  assignees: string[];
  author: string | null;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
}

type Conn = Db | Knex.Transaction;

const ms = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The base query of issues with their author's login. */
function issueRows(db: Conn) {
  return db('issues as i').leftJoin('users as u', 'u.id', 'i.author_id').select('i.*', 'u.login as author');
}

/** An `issues` row with its author's login (issueRows), as either driver gives it. */
interface IssueRow extends Omit<Issue, 'labels' | 'assignees' | 'created_at' | 'updated_at' | 'closed_at'> {
  /** JSON: the assignees' logins. */
  assignees: string;
  author: string | null;
  created_at: DbInt;
  updated_at: DbInt;
  closed_at: DbInt | null;
}

/** Turns rows into Issues, loading their labels in one query. */
async function hydrate(db: Conn, rows: IssueRow[]): Promise<Issue[]> {
  const labels = await labelsOf(
    db,
    rows.map((r) => Number(r.id)),
  );
  return rows.map((r) => ({
    id: Number(r.id),
    repository_id: Number(r.repository_id),
    number: Number(r.number),
    kind: r.kind,
    title: r.title,
    body: r.body,
    state: r.state,
    labels: labels.get(Number(r.id)) ?? [],
    assignees: JSON.parse(r.assignees),
    author: r.author ?? null,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    closed_at: ms(r.closed_at),
  }));
}

/** An issue or pull request by number (of the given kind, when given), or undefined. */
export async function findIssue(db: Conn, repo: Repository, number: number, kind?: IssueKind): Promise<Issue | undefined> {
  const q = issueRows(db).where({ 'i.repository_id': repo.id, 'i.number': number });
  if (kind) q.where('i.kind', kind);
  const [issue] = await hydrate(db, await q);
  return issue;
}

/** A page of issues or pull requests, newest number first; `before` is the number to continue below; `merged` filters pull requests. */
export async function listIssues(
  db: Db,
  repo: Repository,
  options: { kind: IssueKind; state: IssueState | 'all'; limit: number; before?: number; merged?: boolean },
): Promise<Issue[]> {
  const q = issueRows(db).where({ 'i.repository_id': repo.id, 'i.kind': options.kind }).orderBy('i.number', 'desc').limit(options.limit);
  if (options.state !== 'all') q.where('i.state', options.state);
  if (options.before !== undefined) q.where('i.number', '<', options.before);
  // Pull requests only: those merged (or not), read from their pull_requests row.
  if (options.merged !== undefined) q.whereIn('i.id', db('pull_requests').select('issue_id').where('merged', options.merged));
  return hydrate(db, await q);
}

/** The highest number the `issues.number` column (32-bit on both databases) holds. */
export const LAST_NUMBER = 2147483647;

/**
 * The highest number a bulk import may give: far below LAST_NUMBER, so a repository
 * always has numbers left for new issues and pull requests after an import.
 */
export const MAX_IMPORTED_NUMBER = 1_000_000_000;

/** The next number of a repository's shared issue and pull request sequence: one past the highest ever used; a 409 once none is left. */
export async function allocateNumber(trx: Knex.Transaction, repositoryId: number): Promise<number> {
  await lockRepository(trx, repositoryId);
  const row = await trx('issues').where('repository_id', repositoryId).max('number as max').first();
  const highest = Number(row?.max ?? 0);
  // Past the column Postgres fails the insert and SQLite stores a number no path can name.
  if (highest >= LAST_NUMBER) throw conflict(`This repository has used every issue number up to ${LAST_NUMBER}`);
  return highest + 1;
}

/** Inserts an issues row (of either kind) with a fresh number and its labels; returns the new id. */
export async function insertIssue(
  trx: Knex.Transaction,
  repo: Repository,
  author: User,
  input: NewIssue & { kind: IssueKind },
): Promise<{ id: number; number: number }> {
  const number = await allocateNumber(trx, repo.id);
  const now = Date.now();
  const [row] = await trx('issues')
    .insert({
      repository_id: repo.id,
      number,
      kind: input.kind,
      title: input.title,
      body: input.body ?? '',
      state: 'open',
      assignees: JSON.stringify(input.assignees ?? []),
      author_id: author.id,
      created_at: now,
      updated_at: now,
    })
    .returning('id');
  const id = insertedId(row);
  if (input.labels?.length) await replaceLabels(trx, repo.id, new Map([[id, input.labels]]));
  return { id, number };
}

/**
 * Applies a patch to an issues row. Returns whether content changed (an `edited`
 * action) and the state action (`closed`, `reopened`) if the state changed.
 */
export async function patchIssue(trx: Knex.Transaction, issue: Issue, patch: IssuePatch): Promise<{ edited: boolean; stateAction?: 'closed' | 'reopened' }> {
  const now = Date.now();
  const update: Record<string, unknown> = {};
  if (patch.title !== undefined && patch.title !== issue.title) update.title = patch.title;
  if (patch.body !== undefined && patch.body !== issue.body) update.body = patch.body;
  if (patch.assignees !== undefined && JSON.stringify(patch.assignees) !== JSON.stringify(issue.assignees)) update.assignees = JSON.stringify(patch.assignees);
  const newLabels = patch.labels && [...new Set(patch.labels)].sort();
  const labelsChanged = newLabels !== undefined && JSON.stringify(newLabels) !== JSON.stringify(issue.labels);
  let stateAction: 'closed' | 'reopened' | undefined;
  if (patch.state !== undefined && patch.state !== issue.state) {
    update.state = patch.state;
    update.closed_at = patch.state === 'closed' ? now : null;
    stateAction = patch.state === 'closed' ? 'closed' : 'reopened';
  }
  const edited = labelsChanged || Object.keys(update).some((k) => k !== 'state' && k !== 'closed_at');
  if (Object.keys(update).length > 0 || labelsChanged)
    await trx('issues')
      .where('id', issue.id)
      .update({ ...update, updated_at: now });
  if (labelsChanged) await replaceLabels(trx, issue.repository_id, new Map([[issue.id, newLabels]]));
  return { edited, stateAction };
}

/** Opens an issue and raises `issue opened` in the same transaction. */
export async function createIssue(services: Services, repo: Repository, author: User, input: NewIssue): Promise<Issue> {
  return withEvents(services, async (trx, raise) => {
    const { number } = await insertIssue(trx, repo, author, { kind: 'issue', ...input });
    const issue = (await findIssue(trx, repo, number))!;
    raise(producerEvent(services.config, 'issue', 'opened', repo, author, issue));
    return issue;
  });
}

/** Changes an issue, raising `edited` when its content changed and `closed`/`reopened` when its state did; undefined when there is no such issue. */
export async function updateIssue(services: Services, repo: Repository, sender: User, number: number, patch: IssuePatch): Promise<Issue | undefined> {
  return withEvents(services, async (trx, raise) => {
    const before = await findIssue(trx, repo, number, 'issue');
    if (!before) return undefined;
    const { edited, stateAction } = await patchIssue(trx, before, patch);
    const issue = (await findIssue(trx, repo, number))!;
    if (edited) raise(producerEvent(services.config, 'issue', 'edited', repo, sender, issue));
    if (stateAction) raise(producerEvent(services.config, 'issue', stateAction, repo, sender, issue));
    return issue;
  });
}
