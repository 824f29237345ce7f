import type { Knex } from 'knex';
import type { Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { insertedId } from '../db/results.ts';
import { findIssue, type Issue } from './issues.ts';
import { withEvents } from './produce.ts';
import { producerEvent } from './payloads/index.ts';
import { forbidden } from '../errors/wharfError.ts';

/** A comment on an issue or pull request. */
export interface Comment {
  id: number;
  issue_id: number;
  body: string;
  author: string | null;
  author_id: number | null;
  created_at: number;
  updated_at: number;
}

type Conn = Db | Knex.Transaction;

function commentRows(db: Conn) {
  return db('comments as c').leftJoin('users as u', 'u.id', 'c.author_id').select('c.*', 'u.login as author');
}

/** A `comments` row with its author's login (commentRows), as either driver gives it. */
interface CommentRow {
  id: number;
  issue_id: number;
  body: string;
  author: string | null;
  author_id: number | null;
  created_at: DbInt;
  updated_at: DbInt;
}

function toComment(r: CommentRow): Comment {
  return {
    id: Number(r.id),
    issue_id: Number(r.issue_id),
    body: r.body,
    author: r.author ?? null,
    author_id: r.author_id === null ? null : Number(r.author_id),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** A comment of a repository by id, with the issue or pull request it is on; undefined when there is none. */
export async function findComment(db: Conn, repo: Repository, id: number): Promise<{ comment: Comment; issue: Issue } | undefined> {
  const row = await commentRows(db).where({ 'c.id': id, 'c.repository_id': repo.id }).first();
  if (!row) return undefined;
  const number = await db('issues').where('id', row.issue_id).first('number');
  return { comment: toComment(row), issue: (await findIssue(db, repo, Number(number.number)))! };
}

/** Comments of an issue or pull request, oldest first. */
export async function listComments(db: Db, issue: Issue): Promise<Comment[]> {
  return (await commentRows(db).where('c.issue_id', issue.id).orderBy('c.id')).map(toComment);
}

/** Adds a comment to issue or pull request `number`, raising `comment created`; undefined when there is no such number. */
export async function createComment(services: Services, repo: Repository, author: User, number: number, body: string) {
  return withEvents(services, async (trx, raise) => {
    const issue = await findIssue(trx, repo, number);
    if (!issue) return undefined;
    const now = Date.now();
    const [row] = await trx('comments')
      .insert({ repository_id: repo.id, issue_id: issue.id, body, author_id: author.id, created_at: now, updated_at: now })
      .returning('id');
    const { comment } = (await findComment(trx, repo, insertedId(row)))!;
    raise(producerEvent(services.config, 'comment', 'created', repo, author, { comment, issue }));
    return comment;
  });
}

/**
 * Who may edit or delete a comment: its author, or a moderator (an org owner or site
 * admin, as on GitHub); throws a 403 for anyone else, before anything changes.
 */
function mayChange(comment: Comment, sender: User, moderator: boolean): void {
  if (!moderator && comment.author_id !== Number(sender.id)) throw forbidden('Only the author or an organization owner may change this comment');
}

/** Changes a comment's body, raising `comment edited` when it changed; undefined when there is no such comment; 403 for a sender who may not. */
export async function updateComment(services: Services, repo: Repository, sender: User, id: number, body: string, moderator: boolean) {
  return withEvents(services, async (trx, raise) => {
    const found = await findComment(trx, repo, id);
    if (!found) return undefined;
    mayChange(found.comment, sender, moderator);
    if (found.comment.body === body) return found.comment;
    await trx('comments').where('id', id).update({ body, updated_at: Date.now() });
    const { comment, issue } = (await findComment(trx, repo, id))!;
    raise(producerEvent(services.config, 'comment', 'edited', repo, sender, { comment, issue }));
    return comment;
  });
}

/** Deletes a comment, raising `comment deleted` with the comment as it was; false when there is no such comment; 403 for a sender who may not. */
export async function deleteComment(services: Services, repo: Repository, sender: User, id: number, moderator: boolean): Promise<boolean> {
  return withEvents(services, async (trx, raise) => {
    const found = await findComment(trx, repo, id);
    if (!found) return false;
    mayChange(found.comment, sender, moderator);
    await trx('comments').where('id', id).delete();
    raise(producerEvent(services.config, 'comment', 'deleted', repo, sender, found));
    return true;
  });
}
