import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { createOrg, findOrg, findUser, roleIn, setMembership } from '../domain/accounts.ts';
import { createRepository, findRepository, listRepositories, VISIBILITIES } from '../domain/repos.ts';
import { NAME_PATTERN, isValidName } from '../domain/names.ts';
import { compile } from '../http/validate.ts';
import { conflict, forbidden, notFound, validationFailed } from '../http/errors.ts';
import { jsonBody } from '../http/body.ts';
import { iso, presentRepository } from './present.ts';

const name = { type: 'string', pattern: NAME_PATTERN } as const;

const parseNewOrg = compile({ type: 'object', additionalProperties: false, required: ['name'], properties: { name } } as const);

const parseNewMember = compile({
  type: 'object',
  additionalProperties: false,
  required: ['login'],
  properties: { login: name, role: { type: 'string', enum: ['owner', 'member'], default: 'member' } },
} as const);

const parseNewRepo = compile({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name,
    visibility: { type: 'string', enum: VISIBILITIES, default: 'private' },
    description: { type: 'string', maxLength: 1000 },
    // git's branch name rules (check-ref-format) within a safe alphabet: no leading '-', no
    // '..' or '//', no leading, trailing or repeated '/', no component starting with '.'
    // or ending with '.lock', no trailing '.'.
    default_branch: { type: 'string', minLength: 1, maxLength: 255, pattern: '^(?!-)(?!/)(?!.*//)(?!.*/$)(?!.*\\.\\.)(?!.*\\.$)(?!(.*/)?\\.)(?!.*\\.lock(/|$))[A-Za-z0-9._/-]+$' },
  },
} as const);

function checkName(value: string) {
  if (!isValidName(value)) throw validationFailed([{ path: '/name', message: 'must not end in .git or contain ..' }]);
}

/** Organizations: create (site admin), add members (owner), create and list repositories. */
export function orgRoutes(router: Router, services: Services) {
  const { db, config } = services;

  router.post('/orgs', jsonBody(), async (ctx) => {
    if (!ctx.state.user.is_admin) throw forbidden('Only site administrators may create organizations');
    const input = parseNewOrg(ctx.request.body);
    checkName(input.name);
    if (await findOrg(db, input.name)) throw conflict(`Organization ${input.name} already exists`);
    const org = await createOrg(db, input.name, ctx.state.user.id);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/orgs/${org.name}`);
    ctx.body = { id: org.id, name: org.name, created_at: iso(org.created_at) };
  });

  router.post('/orgs/:org/members', jsonBody(), async (ctx) => {
    const org = await findOrg(db, ctx.params.org);
    const role = org && (await roleIn(db, org.id, ctx.state.user));
    if (!org || !role) throw notFound('Organization not found');
    if (role !== 'owner') throw forbidden('Only organization owners may add members');
    const input = parseNewMember(ctx.request.body);
    const member = await findUser(db, input.login);
    if (!member) throw validationFailed([{ path: '/login', message: 'no such user' }]);
    await setMembership(db, org.id, member.id, input.role);
    ctx.body = { org: org.name, login: member.login, role: input.role };
  });

  router.post('/orgs/:org/repos', jsonBody(), async (ctx) => {
    const org = await findOrg(db, ctx.params.org);
    const role = org && (await roleIn(db, org.id, ctx.state.user));
    if (!org || !role) throw notFound('Organization not found');
    const input = parseNewRepo(ctx.request.body);
    checkName(input.name);
    if (await findRepository(db, org.name, input.name)) throw conflict(`Repository ${org.name}/${input.name} already exists`);
    const repo = await createRepository(db, config, {
      org,
      name: input.name,
      visibility: input.visibility,
      description: input.description,
      defaultBranch: input.default_branch,
    });
    ctx.status = 201;
    ctx.set('Location', `/api/v1/repos/${org.name}/${repo.name}`);
    ctx.body = presentRepository(config, repo);
  });

  router.get('/orgs/:org/repos', async (ctx) => {
    const org = await findOrg(db, ctx.params.org);
    if (!org) throw notFound('Organization not found');
    ctx.body = (await listRepositories(db, org, ctx.state.user)).map((r) => presentRepository(config, r));
  });
}
