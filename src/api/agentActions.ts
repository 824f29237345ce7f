import { recordAgentAction } from '../domain/agentActions.ts';
import { MAX_INT, text } from './fields.ts';
import { iso } from './present.ts';
import { route, type Route } from './route.ts';
import { ID, TIME } from './schemas.ts';

const TARGET_TYPE = { type: 'string', enum: ['issue', 'pull_request', 'commit'] } as const;
// A number for issues and pull requests, a full sha for commits; the pairing is checked against the repository.
const TARGET_ID = {
  anyOf: [
    { type: 'integer', minimum: 1, maximum: MAX_INT },
    { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' },
  ],
} as const;

const NewAgentAction = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'action', 'summary', 'target'],
  properties: {
    name: text(1, 255),
    action: text(1, 255),
    summary: text(0, 65536),
    target: { type: 'object', additionalProperties: false, required: ['type', 'id'], properties: { type: TARGET_TYPE, id: TARGET_ID } },
  },
} as const;

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
    body: NewAgentAction,
    answers: { 201: AgentActionSchema },
    handler: async ({ body }, ctx, services) => {
      const done = await recordAgentAction(services, ctx.state.repo, ctx.state.user, body);
      ctx.status = 201;
      ctx.body = { id: done.id, name: done.name, action: done.action, summary: done.summary, target: done.target, created_at: iso(done.created_at) };
    },
  }),
];
