import { createComment, deleteComment, listComments, updateComment, type Comment } from '../domain/comments.ts';
import { findIssue } from '../domain/issues.ts';
import { notFound } from '../http/errors.ts';
import { COMMENT_BODY } from '../domain/inputs/comments.ts';
import { iso } from './present.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, listOf, repoParams, TEXT_OR_NULL, TIME } from './schemas.ts';

const CommentSchema = named('Comment', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'body', 'user', 'created_at', 'updated_at'],
  properties: { id: ID, body: { type: 'string' }, user: TEXT_OR_NULL, created_at: TIME, updated_at: TIME },
} as const);

const ISSUE_PARAMS = repoParams('number');
const COMMENT_PARAMS = repoParams('id');

/** The API form of a comment. */
function presentComment(comment: Comment): Answer<typeof CommentSchema> {
  return { id: comment.id, body: comment.body, user: comment.author, created_at: iso(comment.created_at), updated_at: iso(comment.updated_at) };
}

/** Comments on issues and pull requests (SPEC §6 producer of `comment`). */
export const commentRoutes: Route[] = [
  route({
    id: 'createComment',
    method: 'post',
    path: '/repos/{org}/{repo}/issues/{number}/comments',
    summary: 'Comment on an issue or pull request',
    tag: 'comments',
    access: 'repo:write',
    params: ISSUE_PARAMS,
    notFound: 'Issue not found',
    body: COMMENT_BODY,
    answers: { 201: CommentSchema },
    headers: { 201: ['Location'] },
    handler: async ({ params, body }, ctx, services) => {
      const comment = await createComment(services, ctx.state.repo, ctx.state.user, params.number, body.body);
      if (!comment) throw notFound('Issue not found');
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${ctx.state.repo.org}/${ctx.state.repo.name}/comments/${comment.id}`);
      ctx.body = presentComment(comment);
    },
  }),
  route({
    id: 'listComments',
    method: 'get',
    path: '/repos/{org}/{repo}/issues/{number}/comments',
    summary: 'The comments of an issue or pull request, oldest first',
    tag: 'comments',
    access: 'repo:read',
    params: ISSUE_PARAMS,
    notFound: 'Issue not found',
    answers: { 200: listOf(CommentSchema) },
    handler: async ({ params }, ctx, { db }) => {
      const issue = await findIssue(db, ctx.state.repo, params.number);
      if (!issue) throw notFound('Issue not found');
      ctx.body = (await listComments(db, issue)).map(presentComment);
    },
  }),
  route({
    id: 'updateComment',
    method: 'patch',
    path: '/repos/{org}/{repo}/comments/{id}',
    summary: 'Edit a comment (its author or an organization owner)',
    tag: 'comments',
    access: 'repo:write',
    params: COMMENT_PARAMS,
    notFound: 'Comment not found',
    body: COMMENT_BODY,
    answers: { 200: CommentSchema },
    handler: async ({ params, body }, ctx, services) => {
      const comment = await updateComment(services, ctx.state.repo, ctx.state.user, params.id, body.body, ctx.state.access.admin);
      if (!comment) throw notFound('Comment not found');
      ctx.body = presentComment(comment);
    },
  }),
  route({
    id: 'deleteComment',
    method: 'delete',
    path: '/repos/{org}/{repo}/comments/{id}',
    summary: 'Delete a comment (its author or an organization owner)',
    tag: 'comments',
    access: 'repo:write',
    params: COMMENT_PARAMS,
    notFound: 'Comment not found',
    answers: { 204: null },
    handler: async ({ params }, ctx, services) => {
      if (!(await deleteComment(services, ctx.state.repo, ctx.state.user, params.id, ctx.state.access.admin))) throw notFound('Comment not found');
      ctx.status = 204;
    },
  }),
];
