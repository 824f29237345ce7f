import { recordAgentAction } from '../domain/agentActions.ts';
import { NEW_AGENT_ACTION, TARGET_ID, TARGET_TYPE } from '../domain/inputs/agentActions.ts';
import { iso } from './present.ts';
import { route, type Answer, type Route } from './route.ts';
import { ID, TIME } from './schemas.ts';

const AgentActionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'action', 'summary', 'target', 'created_at'],
  properties: {
    id: ID,
    name: { type: 'string' },
    action: { type: 'string' },
    summary: { type: 'string' },
    target: { type: 'object', additionalProperties: false, required: ['type', 'id'], properties: { type: TARGET_TYPE, id: TARGET_ID } },
    created_at: TIME,
  },
} as const;

/** Actions reported by automated agents (SPEC §6 producer of `agent`). */
export const agentActionRoutes: Route[] = [
  route({
    id: 'recordAgentAction',
    method: 'post',
    path: '/repos/{org}/{repo}/agent-actions',
    summary: 'Report what an automated agent did to an issue, pull request or commit',
    tag: 'agents',
    access: 'repo:write',
    body: NEW_AGENT_ACTION,
    answers: { 201: AgentActionSchema },
    handler: async ({ body }, ctx, services) => {
      const done = await recordAgentAction(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.body = {
        id: done.id,
        name: done.name,
        action: done.action,
        summary: done.summary,
        target: done.target,
        created_at: iso(done.created_at),
      } satisfies Answer<typeof AgentActionSchema>;
    },
  }),
];
