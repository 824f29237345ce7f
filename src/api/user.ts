import { orgsOf } from '../domain/accounts.ts';
import { issueToken, revokeToken } from '../domain/tokens.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import { parseDuration } from '../util/duration.ts';
import { iso } from './present.ts';
import { route, type Answer, type Route } from './route.ts';
import { ID, idParams, TIME, TIME_OR_NULL } from './schemas.ts';

/** The longest lifetime a token may be given: a year, with room for a leap day. */
const MAX_TOKEN_LIFETIME_MS = 366 * 86_400_000;

const NewToken = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    expires_in: { type: 'string', maxLength: 20, description: 'a duration such as 30d or 12h' },
  },
} as const;

const UserSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'login', 'type', 'is_admin', 'created_at', 'orgs'],
  properties: {
    id: ID,
    login: { type: 'string' },
    type: { type: 'string', const: 'User' },
    is_admin: { type: 'boolean' },
    created_at: TIME,
    orgs: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'role'],
        properties: { name: { type: 'string' }, role: { type: 'string', enum: ['owner', 'member'] } },
      },
    },
  },
} as const;

const IssuedTokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'token', 'expires_at', 'created_at'],
  properties: {
    id: ID,
    name: { type: 'string' },
    token: { type: 'string', description: 'Shown this once; only its hash is stored.' },
    expires_at: TIME_OR_NULL,
    created_at: TIME,
  },
} as const;

const TOKEN_PARAMS = idParams('id');

/** The caller's own account: GET /user, token issue and revoke. */
export const userRoutes: Route[] = [
  route({
    id: 'getUser',
    method: 'get',
    path: '/user',
    summary: "The token's user and their organizations",
    tag: 'users',
    access: 'token',
    answers: { 200: UserSchema },
    handler: async (_input, ctx, { db }) => {
      const user = ctx.state.user;
      ctx.body = {
        id: user.id,
        login: user.login,
        type: 'User',
        is_admin: user.is_admin,
        created_at: iso(user.created_at),
        orgs: await orgsOf(db, user.id),
      } satisfies Answer<typeof UserSchema>;
    },
  }),
  route({
    id: 'createToken',
    method: 'post',
    path: '/user/tokens',
    summary: 'Issue a token for the caller',
    tag: 'users',
    access: 'token',
    body: NewToken,
    answers: { 201: IssuedTokenSchema },
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, { db }) => {
      let expiresIn: number | undefined;
      if (body.expires_in !== undefined) {
        expiresIn = parseDuration(body.expires_in);
        if (!expiresIn) throw validationFailed([{ path: '/expires_in', message: 'must be a duration such as 30d, 12h or 90m' }]);
        if (expiresIn > MAX_TOKEN_LIFETIME_MS) throw validationFailed([{ path: '/expires_in', message: 'must be at most 366d' }]);
      }
      const issued = await issueToken(db, ctx.state.user.id, body.name, expiresIn);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/user/tokens/${issued.id}`);
      ctx.body = issued satisfies Answer<typeof IssuedTokenSchema>;
    },
  }),
  route({
    id: 'revokeToken',
    method: 'delete',
    path: '/user/tokens/{id}',
    summary: "Revoke one of the caller's tokens",
    tag: 'users',
    access: 'token',
    params: TOKEN_PARAMS,
    notFound: 'Token not found',
    answers: { 204: null },
    handler: async ({ params }, ctx, { db }) => {
      if (!(await revokeToken(db, ctx.state.user.id, params.id))) throw notFound('Token not found');
      ctx.status = 204;
    },
  }),
];
