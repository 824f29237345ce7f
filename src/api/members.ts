import { findUser } from '../domain/accounts.ts';
import { changeMemberRole, listMembers, removeMember, setMemberRole } from '../domain/members.ts';
import { NEW_MEMBER, MEMBER_ROLE } from '../domain/inputs/orgs.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import { route, type Answer, type Route } from './route.ts';
import { listOf } from './schemas.ts';

const MembershipSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['org', 'login', 'role'],
  properties: { org: { type: 'string' }, login: { type: 'string' }, role: { type: 'string', enum: ['owner', 'member'] } },
} as const;

/** A member in a path: looked up as given, a 404 when the organization has no such member. */
const MEMBER_PARAMS = {
  type: 'object',
  required: ['org', 'login'],
  properties: { org: { type: 'string' }, login: { type: 'string' } },
} as const;

const NOT_MEMBER = 'Member not found';

/** An organization's members: list (members), add, change a role and remove (owners); never leaving it without an owner (409). */
export const memberRoutes: Route[] = [
  route({
    id: 'listMembers',
    method: 'get',
    path: '/orgs/{org}/members',
    summary: "An organization's members and their roles (visible to its members)",
    tag: 'organizations',
    access: 'org:member',
    answers: { 200: listOf(MembershipSchema) },
    handler: async (_input, ctx, { db }) => {
      const org = ctx.state.org;
      ctx.body = (await listMembers(db, org)).map((m) => ({ org: org.name, ...m })) satisfies Answer<typeof MembershipSchema>[];
    },
  }),
  route({
    id: 'addMember',
    method: 'post',
    path: '/orgs/{org}/members',
    summary: 'Add a user to an organization, or change their role',
    tag: 'organizations',
    access: 'org:owner',
    denied: 'Only organization owners may add members',
    body: NEW_MEMBER,
    answers: { 200: MembershipSchema },
    errors: [409],
    handler: async ({ body }, ctx, { db }) => {
      const member = await findUser(db, body.login);
      if (!member) throw validationFailed([{ path: '/login', message: 'no such user' }]);
      await setMemberRole(db, ctx.state.org.id, member.id, body.role);
      ctx.body = { org: ctx.state.org.name, login: member.login, role: body.role } satisfies Answer<typeof MembershipSchema>;
    },
  }),
  route({
    id: 'changeMemberRole',
    method: 'patch',
    path: '/orgs/{org}/members/{login}',
    summary: "Change a member's role",
    tag: 'organizations',
    access: 'org:owner',
    denied: 'Only organization owners may change roles',
    params: MEMBER_PARAMS,
    notFound: NOT_MEMBER,
    body: MEMBER_ROLE,
    answers: { 200: MembershipSchema },
    errors: [409],
    handler: async ({ params, body }, ctx, { db }) => {
      const member = await findUser(db, params.login);
      if (!member || !(await changeMemberRole(db, ctx.state.org.id, member.id, body.role))) throw notFound(NOT_MEMBER);
      ctx.body = { org: ctx.state.org.name, login: member.login, role: body.role } satisfies Answer<typeof MembershipSchema>;
    },
  }),
  route({
    id: 'removeMember',
    method: 'delete',
    path: '/orgs/{org}/members/{login}',
    summary: 'Remove a member from an organization',
    tag: 'organizations',
    access: 'org:owner',
    denied: 'Only organization owners may remove members',
    params: MEMBER_PARAMS,
    notFound: NOT_MEMBER,
    answers: { 204: null },
    errors: [409],
    handler: async ({ params }, ctx, { db }) => {
      const member = await findUser(db, params.login);
      if (!member || !(await removeMember(db, ctx.state.org.id, member.id))) throw notFound(NOT_MEMBER);
      ctx.status = 204;
    },
  }),
];
