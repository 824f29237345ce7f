import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import type { CommentBody } from './schemas/comment.ts';

/** What the comment payload reads of a comment and its issue (the domain's Comment and Issue have it). */
export interface CommentSubject {
  comment: { id: number; body: string; author: CommentBody['comment']['user']; created_at: number };
  issue: CommentBody['issue'];
}

/** `comment` payload body (SPEC §6): the comment and the issue or pull request it belongs to. */
export function commentPayload(_config: Config, _repo: Repository, subject: CommentSubject): CommentBody {
  const { comment, issue } = subject;
  return {
    comment: { id: comment.id, body: comment.body, user: comment.author, created_at: new Date(comment.created_at).toISOString() },
    issue: { number: issue.number, title: issue.title, state: issue.state },
  };
}
