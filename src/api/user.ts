import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { orgsOf } from '../domain/accounts.ts';
import { issueToken, revokeToken } from '../domain/tokens.ts';
import { compile } from '../http/validate.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import { jsonBody } from '../http/body.ts';
import { parseDuration } from '../util/duration.ts';
import { idParam } from './params.ts';
import { iso } from './present.ts';

/** The longest lifetime a token may be given: a year, with room for a leap day. */
const MAX_TOKEN_LIFETIME_MS = 366 * 86_400_000;

const parseNewToken = compile({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    expires_in: { type: 'string', maxLength: 20, description: 'a duration such as 30d or 12h' },
  },
} as const);

/** The caller's own account: GET /user, token issue and revoke. */
export function userRoutes(router: Router, { db }: Services) {
  router.get('/user', async (ctx) => {
    const user = ctx.state.user;
    ctx.body = { id: user.id, login: user.login, type: 'User', is_admin: user.is_admin, created_at: iso(user.created_at), orgs: await orgsOf(db, user.id) };
  });

  router.post('/user/tokens', jsonBody(), async (ctx) => {
    const input = parseNewToken(ctx.request.body);
    let expiresIn: number | undefined;
    if (input.expires_in !== undefined) {
      expiresIn = parseDuration(input.expires_in);
      if (!expiresIn) throw validationFailed([{ path: '/expires_in', message: 'must be a duration such as 30d, 12h or 90m' }]);
      if (expiresIn > MAX_TOKEN_LIFETIME_MS) throw validationFailed([{ path: '/expires_in', message: 'must be at most 366d' }]);
    }
    const issued = await issueToken(db, ctx.state.user.id, input.name, expiresIn);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/user/tokens/${issued.id}`);
    ctx.body = issued;
  });

  router.delete('/user/tokens/:id', async (ctx) => {
    const id = idParam(ctx.params.id, 'Token not found');
    if (!(await revokeToken(db, ctx.state.user.id, id))) throw notFound('Token not found');
    ctx.status = 204;
  });
}
