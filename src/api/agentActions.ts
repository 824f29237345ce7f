import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { recordAgentAction } from '../domain/agentActions.ts';
import { repoAccess } from '../http/repoAccess.ts';
import { compile } from '../http/validate.ts';
import { MAX_INT, text } from './fields.ts';
import { jsonBody } from '../http/body.ts';
import { iso } from './present.ts';

const parseAgentAction = compile({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'action', 'summary', 'target'],
  properties: {
    name: text(1, 255),
    action: text(1, 255),
    summary: text(0, 65536),
    target: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: {
        type: { type: 'string', enum: ['issue', 'pull_request', 'commit'] },
        // A number for issues and pull requests, a full sha for commits; the pairing is checked against the repository.
        id: { anyOf: [{ type: 'integer', minimum: 1, maximum: MAX_INT }, { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' }] },
      },
    },
  },
} as const);

/** Actions reported by automated agents (SPEC §6 producer of `agent`). */
export function agentActionRoutes(router: Router, services: Services) {
  router.post('/repos/:org/:repo/agent-actions', repoAccess(services.db, 'write'), jsonBody(), async (ctx) => {
    const input = parseAgentAction(ctx.request.body);
    const done = await recordAgentAction(services, ctx.state.repo, ctx.state.user, input);
    ctx.status = 201;
    ctx.body = { id: done.id, name: done.name, action: done.action, summary: done.summary, target: done.target, created_at: iso(done.created_at) };
  });
}
