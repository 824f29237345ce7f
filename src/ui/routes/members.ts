import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { findOrg, findUser, roleIn, type Org, type Role, type User } from '../../domain/accounts.ts';
import { changeMemberRole, listMembers, memberRole, removeMember, setMemberRole } from '../../domain/members.ts';
import { isValidName } from '../../domain/names.ts';
import { WharfError } from '../../errors/wharfError.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { formErrors, type FieldErrors } from '../pages/formErrors.ts';
import { requireUser } from '../user.ts';

const ROLES: Role[] = ['member', 'owner'];

interface OrgScope {
  org: Org;
  user: User;
  owner: boolean;
  base: string;
}

/** The organization of the path for one of its members (site administrators included); 404 for anyone else, as the API's member list. */
async function orgScope(ctx: Context, services: Services): Promise<OrgScope> {
  const user = requireUser(ctx);
  const org = await findOrg(services.db, ctx.params.org);
  const role = org && (await roleIn(services.db, org.id, user));
  if (!org || !role) throw new PageError(404, 'Not found', 'Organization not found');
  return { org, user, owner: role === 'owner', base: `/-/orgs/${org.name}/members` };
}

/** The same scope, for a change: members who are not owners get the API's 403. */
async function ownerScope(ctx: Context, services: Services): Promise<OrgScope> {
  const scope = await orgScope(ctx, services);
  if (!scope.owner) throw new PageError(403, 'Not allowed', 'Only organization owners may manage members');
  return scope;
}

function roleOptions(chosen: Role) {
  return ROLES.map((r) => html`<option value="${r}" ${r === chosen ? html`selected` : ''}>${r === 'owner' ? 'Owner' : 'Member'}</option>`);
}

function roleOf(value: string | null): Role | null {
  return value === 'owner' || value === 'member' ? value : null;
}

/** The members page: the list for members; for owners also a role control and Remove on each row, and the add form. */
async function membersPage(ctx: Context, services: Services, scope: OrgScope, values = { login: '', role: 'member' as Role }, errors: FieldErrors = {}) {
  const { org, owner, base } = scope;
  const members = await listMembers(services.db, org);
  const shown = formErrors(errors, [
    { key: 'login', id: 'member-login', label: 'Login' },
    { key: 'role', id: 'member-role', label: 'Role' },
  ]);
  const rows = members.map((m, i) => {
    const actions = owner
      ? html`<td class="row-actions"><div class="member-actions"><form method="post" action="${base}/${m.login}/role" class="member-role">${csrfField(ctx)}<label for="role-${i}" class="sr-only">Role of ${m.login}</label><select id="role-${i}" name="role">${roleOptions(m.role)}</select> <button type="submit" class="small">Change role</button></form>
        <form method="post" action="${base}/${m.login}/remove" class="inline">${csrfField(ctx)}<button type="submit" class="danger small" aria-label="Remove ${m.login}">Remove</button></form></div></td>`
      : '';
    return html`<tr><td data-label="Login"><span class="strong">${m.login}</span>${m.login === scope.user.login ? html` <span class="muted">(you)</span>` : ''}</td><td data-label="Role">${m.role === 'owner' ? 'Owner' : 'Member'}</td>${actions}</tr>`;
  });
  const table = members.length
    ? html`<table class="table stacking"><thead><tr><th>Login</th><th>Role</th>${owner ? html`<th><span class="sr-only">Actions</span></th>` : ''}</tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">No members yet${scope.user.is_admin ? ': site administrators own every organization' : ''}.</p>`;
  const addForm = owner
    ? html`<section class="card" aria-labelledby="add-heading"><h2 id="add-heading">Add a member</h2>
      <form method="post" action="${base}" class="stack">${csrfField(ctx)}${shown.summary}
        <label for="member-login">Login of an existing user</label>
        <input id="member-login" name="login" required maxlength="100" autocomplete="off" spellcheck="false" value="${values.login}" ${shown.attrs('login')}>${shown.message('login')}
        <label for="member-role">Role</label>
        <select id="member-role" name="role" ${shown.attrs('role')}>${roleOptions(values.role)}</select>${shown.message('role')}
        <p class="hint">Members read every repository of ${org.name} and push to them; owners also manage members, webhooks and imports.</p>
        <div><button type="submit" class="primary">Add member</button></div>
      </form></section>`
    : '';
  renderPage(
    ctx,
    {
      title: `Members · ${org.name}`,
      crumbs: [{ label: org.name, href: `/${org.name}` }, { label: 'Members' }],
      status: Object.keys(errors).length ? 422 : 200,
    },
    html`<h1>Members of ${org.name}</h1><section class="card" aria-label="Members">${table}</section>${addForm}`,
  );
}

/** The member a path names, or the page's 404. */
async function memberOf(services: Services, scope: OrgScope, login: string): Promise<User> {
  const member = await findUser(services.db, login);
  if (!member || !(await memberRole(services.db, scope.org.id, member.id)))
    throw new PageError(404, 'Not found', `${login} is not a member of ${scope.org.name}`);
  return member;
}

/** Runs a change that may take away the last owner: its refusal comes back as the page's error message. */
async function unlessLastOwner(ctx: Context, back: string, change: () => Promise<unknown>): Promise<boolean> {
  try {
    await change();
    return true;
  } catch (err) {
    if (!(err instanceof WharfError) || err.code !== 'conflict') throw err;
    redirectWithFlash(ctx, back, `${err.message}.`, 'error');
    return false;
  }
}

/** Organization → Members (`/-/orgs/<org>/members`): its members see the list, its owners manage it. */
export function memberRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/-/orgs/:org/members', async (ctx) => membersPage(ctx, services, await orgScope(ctx, services)));

  router.post('/-/orgs/:org/members', async (ctx) => {
    const scope = await ownerScope(ctx, services);
    const form = postedForm(ctx);
    const login = (form.get('login') ?? '').trim();
    const role = roleOf(form.get('role'));
    const values = { login, role: role ?? 'member' };
    // A login no user can have is not looked up (Postgres refuses a NUL in text).
    const user = isValidName(login) ? await findUser(db, login) : undefined;
    const errors: FieldErrors = {};
    if (!login) errors.login = ['Enter a login.'];
    else if (!user) errors.login = ['No user has this login.'];
    else if (await memberRole(db, scope.org.id, user.id)) errors.login = [`${user.login} is already a member: change their role in the list.`];
    if (!role) errors.role = ['Choose Member or Owner.'];
    if (Object.keys(errors).length) return membersPage(ctx, services, scope, values, errors);
    await setMemberRole(db, scope.org.id, user!.id, role!);
    redirectWithFlash(ctx, scope.base, `${user!.login} added as ${role === 'owner' ? 'an owner' : 'a member'}.`);
  });

  router.post('/-/orgs/:org/members/:login/role', async (ctx) => {
    const scope = await ownerScope(ctx, services);
    const member = await memberOf(services, scope, ctx.params.login);
    const role = roleOf(postedForm(ctx).get('role'));
    if (!role) throw new PageError(422, 'Not accepted', 'The role must be member or owner.');
    if (await unlessLastOwner(ctx, scope.base, () => changeMemberRole(db, scope.org.id, member.id, role)))
      redirectWithFlash(ctx, scope.base, `${member.login} is now ${role === 'owner' ? 'an owner' : 'a member'}.`);
  });

  router.post('/-/orgs/:org/members/:login/remove', async (ctx) => {
    const scope = await ownerScope(ctx, services);
    const member = await memberOf(services, scope, ctx.params.login);
    if (!(await unlessLastOwner(ctx, scope.base, () => removeMember(db, scope.org.id, member.id)))) return;
    // Someone who removed themselves (and is no site administrator) can no longer see the page.
    const stillIn = member.id !== scope.user.id || scope.user.is_admin;
    redirectWithFlash(ctx, stillIn ? scope.base : '/', `${member.login} removed from ${scope.org.name}.`);
  });
}
