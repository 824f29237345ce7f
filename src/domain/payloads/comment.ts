import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import type { Issue } from '../issues.ts';
import type { Comment } from '../comments.ts';
import type { CommentBody } from './schemas/comment.ts';

/** `comment` payload body (SPEC §6): the comment and the issue or pull request it belongs to. */
export function commentPayload(_config: Config, _repo: Repository, subject: { comment: Comment; issue: Issue }): CommentBody {
  const { comment, issue } = subject;
  return {
    comment: { id: comment.id, body: comment.body, user: comment.author, created_at: new Date(comment.created_at).toISOString() },
    issue: { number: issue.number, title: issue.title, state: issue.state },
  };
}
