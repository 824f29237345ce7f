import { pendingPushes, type PendingPush } from '../pushes/pending.ts';
import { iso } from './present.ts';
import { named, route, type Answer, type Route } from './route.ts';
import { ID, listOf, TIME, TIME_OR_NULL } from './schemas.ts';

const PendingPushSchema = named('PendingPush', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'landed_at', 'refs', 'state', 'attempts', 'next_try_at', 'last_error'],
  properties: {
    id: ID,
    landed_at: TIME,
    refs: { type: 'integer', minimum: 0, description: 'Refs the push changed.' },
    state: {
      type: 'string',
      enum: ['waiting', 'failing', 'parked'],
      description: 'waiting: not recorded yet; failing: failed at least once, tried again at next_try_at; parked: never tried again by itself.',
    },
    attempts: { type: 'integer', minimum: 0 },
    next_try_at: { ...TIME_OR_NULL, description: 'Null when parked.' },
    last_error: { type: ['string', 'null'] },
  },
} as const);

/** The API form of a push whose events are not recorded yet. */
function presentPendingPush(p: PendingPush): Answer<typeof PendingPushSchema> {
  return {
    id: p.id,
    landed_at: iso(p.landedAt),
    refs: p.refs,
    state: p.state,
    attempts: p.attempts,
    next_try_at: p.nextTryAt === null ? null : iso(p.nextTryAt),
    last_error: p.lastError,
  };
}

/** Pushes whose events are not recorded yet: GET /repos/{org}/{repo}/push-records (owners). */
export const pushRecordRoutes: Route[] = [
  route({
    id: 'listPendingPushes',
    method: 'get',
    path: '/repos/{org}/{repo}/push-records',
    summary: 'Pushes whose events are not recorded yet (waiting, failing or parked), oldest first, at most 100',
    tag: 'repositories',
    access: 'repo:admin',
    answers: { 200: listOf(PendingPushSchema) },
    handler: async (_input, ctx, { db }) => {
      ctx.body = (await pendingPushes(db, ctx.state.repo.id)).map(presentPendingPush);
    },
  }),
];
