import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { createComment, deleteComment, listComments, updateComment, type Comment } from '../domain/comments.ts';
import { findIssue } from '../domain/issues.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { jsonBody } from '../http/body.ts';
import { notFound } from '../http/errors.ts';
import { intParam, text } from './fields.ts';
import { iso } from './present.ts';

const parseCommentBody = compile({
  type: 'object',
  additionalProperties: false,
  required: ['body'],
  properties: { body: text(1, 262144) },
} as const);

/** The API form of a comment. */
function presentComment(comment: Comment) {
  return { id: comment.id, body: comment.body, user: comment.author, created_at: iso(comment.created_at), updated_at: iso(comment.updated_at) };
}

/** Comments on issues and pull requests (SPEC §6 producer of `comment`). */
export function commentRoutes(router: Router, services: Services) {
  const { db } = services;

  router.post('/repos/:org/:repo/issues/:number/comments', repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const number = intParam(ctx.params.number, 'Issue not found');
    const { body } = parseCommentBody(ctx.request.body);
    const comment = await createComment(services, ctx.state.repo, ctx.state.user, number, body);
    if (!comment) throw notFound('Issue not found');
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/comments/${comment.id}`);
    ctx.body = presentComment(comment);
  });

  router.get('/repos/:org/:repo/issues/:number/comments', repoAccess(db, 'read'), async (ctx) => {
    const issue = await findIssue(db, ctx.state.repo, intParam(ctx.params.number, 'Issue not found'));
    if (!issue) throw notFound('Issue not found');
    ctx.body = (await listComments(db, issue)).map(presentComment);
  });

  router.patch('/repos/:org/:repo/comments/:id', repoAccess(db, 'write'), jsonBody(), async (ctx) => {
    const id = intParam(ctx.params.id, 'Comment not found');
    const { body } = parseCommentBody(ctx.request.body);
    const comment = await updateComment(services, ctx.state.repo, ctx.state.user, id, body, ctx.state.access.admin);
    if (!comment) throw notFound('Comment not found');
    ctx.body = presentComment(comment);
  });

  router.delete('/repos/:org/:repo/comments/:id', repoAccess(db, 'write'), async (ctx) => {
    if (!(await deleteComment(services, ctx.state.repo, ctx.state.user, intParam(ctx.params.id, 'Comment not found'), ctx.state.access.admin))) throw notFound('Comment not found');
    ctx.status = 204;
  });
}
