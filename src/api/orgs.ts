import { createOrg, findOrg } from '../domain/accounts.ts';
import { createRepository, findRepository, listRepositories } from '../domain/repos.ts';
import { isValidName, NAME_RULE } from '../domain/names.ts';
import { NEW_ORG } from '../domain/inputs/orgs.ts';
import { NEW_REPOSITORY } from '../domain/inputs/repos.ts';
import { conflict, validationFailed } from '../http/errors.ts';
import { iso, presentRepository } from './present.ts';
import { route, type Answer, type Route } from './route.ts';
import { ID, listOf, RepositorySchema, TIME } from './schemas.ts';

const OrgSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'created_at'],
  properties: { id: ID, name: { type: 'string' }, created_at: TIME },
} as const;

function checkName(value: string) {
  if (!isValidName(value)) throw validationFailed([{ path: '/name', message: NAME_RULE }]);
}

/** Organizations: create (site admin), create and list repositories (members: members.ts). */
export const orgRoutes: Route[] = [
  route({
    id: 'createOrg',
    method: 'post',
    path: '/orgs',
    summary: 'Create an organization, owned by the caller',
    tag: 'organizations',
    access: 'site:admin',
    denied: 'Only site administrators may create organizations',
    body: NEW_ORG,
    answers: { 201: OrgSchema },
    errors: [409],
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, { db }) => {
      checkName(body.name);
      if (await findOrg(db, body.name)) throw conflict(`Organization ${body.name} already exists`);
      const org = await createOrg(db, body.name, ctx.state.user.id);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/orgs/${org.name}`);
      ctx.body = { id: org.id, name: org.name, created_at: iso(org.created_at) } satisfies Answer<typeof OrgSchema>;
    },
  }),
  route({
    id: 'createRepository',
    method: 'post',
    path: '/orgs/{org}/repos',
    summary: 'Create a repository in an organization',
    tag: 'repositories',
    access: 'org:member',
    body: NEW_REPOSITORY,
    answers: { 201: RepositorySchema },
    errors: [409],
    headers: { 201: ['Location'] },
    handler: async ({ body }, ctx, services) => {
      const { db, config } = services;
      const org = ctx.state.org;
      checkName(body.name);
      if (await findRepository(db, org.name, body.name)) throw conflict(`Repository ${org.name}/${body.name} already exists`);
      const repo = await createRepository(services, { ...body, org }, ctx.state.user);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/repos/${org.name}/${repo.name}`);
      ctx.body = presentRepository(config, repo);
    },
  }),
  route({
    id: 'listOrgRepositories',
    method: 'get',
    path: '/orgs/{org}/repos',
    summary: 'The repositories of an organization the caller can see',
    tag: 'repositories',
    access: 'org:read',
    answers: { 200: listOf(RepositorySchema) },
    handler: async (_input, ctx, { db, config }) => {
      ctx.body = (await listRepositories(db, ctx.state.org, ctx.state.user)).map((r) => presentRepository(config, r));
    },
  }),
];
