import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { createOrg, findOrg, orgsFor, type User } from '../../domain/accounts.ts';
import { ownedOrg } from '../../domain/access.ts';
import { createRepository, findRepository, VISIBILITIES, type Visibility } from '../../domain/repos.ts';
import { isValidName, NAME_RULE } from '../../domain/names.ts';
import { NEW_REPOSITORY } from '../../domain/inputs/repos.ts';
import { WharfError } from '../../errors/wharfError.ts';
import { isBadText } from '../../http/inputGuard.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { formErrors, type FieldErrors } from '../pages/formErrors.ts';
import { refusedPage, requireUser } from '../user.ts';

const DESCRIPTION_MAX = NEW_REPOSITORY.properties.description.maxLength;
const VISIBILITY_HINTS: Record<Visibility, string> = {
  private: 'only members of the organization',
  internal: 'anyone signed in',
  public: 'anyone, signed in or not',
};

interface RepoValues {
  org: string;
  name: string;
  description: string;
  visibility: string;
}

/** Organizations the user owns: where the form creates repositories. */
async function ownedOrgNames(services: Services, user: User): Promise<string[]> {
  return (await orgsFor(services.db, user)).filter((o) => o.role === 'owner').map((o) => o.name);
}

function nameErrors(name: string): string[] {
  if (!name) return ['Enter a name.'];
  return isValidName(name) ? [] : [`The name ${NAME_RULE}.`];
}

async function newRepoPage(ctx: Context, services: Services, user: User, values: RepoValues, errors: FieldErrors = {}) {
  const orgs = await ownedOrgNames(services, user);
  const shown = formErrors(errors, [
    { key: 'org', id: 'repo-org', label: 'Organization' },
    { key: 'name', id: 'repo-name', label: 'Name' },
    { key: 'description', id: 'repo-description', label: 'Description' },
    { key: 'visibility', id: 'visibility-private', label: 'Visibility' },
  ]);
  const form = orgs.length
    ? html`<form method="post" action="/-/new" class="stack">${csrfField(ctx)}${shown.summary}
      <label for="repo-org">Organization</label>
      <select id="repo-org" name="org" ${shown.attrs('org')}>${orgs.map((o) => html`<option value="${o}" ${o === values.org ? html`selected` : ''}>${o}</option>`)}</select>${shown.message('org')}
      <label for="repo-name">Name</label>
      <input id="repo-name" name="name" required maxlength="100" autocomplete="off" spellcheck="false" value="${values.name}" ${shown.attrs('name')}>${shown.message('name')}
      <label for="repo-description">Description <span class="muted">(optional)</span></label>
      <input id="repo-description" name="description" maxlength="${DESCRIPTION_MAX}" value="${values.description}" ${shown.attrs('description')}>${shown.message('description')}
      <fieldset><legend>Visibility</legend>${VISIBILITIES.slice()
        .reverse()
        .map(
          (v) =>
            html`<label class="choice"><input type="radio" name="visibility" value="${v}" id="visibility-${v}" ${v === values.visibility ? html`checked` : ''}> ${v[0].toUpperCase() + v.slice(1)} <span class="muted">— ${VISIBILITY_HINTS[v]}</span></label>`,
        )}</fieldset>${shown.message('visibility')}
      <div><button type="submit" class="primary">Create repository</button></div>
    </form>`
    : html`<p class="empty">You own no organization. Owners create repositories here; members create one by pushing to it.</p>`;
  renderPage(
    ctx,
    { title: 'New repository', crumbs: [{ label: 'New repository' }], status: Object.keys(errors).length ? 422 : 200 },
    html`<section class="card narrow"><h1>New repository</h1>${form}</section>`,
  );
}

/** Creates the repository as `POST /orgs/{org}/repos` does, or the form's errors. */
async function createFromForm(services: Services, user: User, values: RepoValues): Promise<FieldErrors | null> {
  const errors: FieldErrors = {};
  const name = nameErrors(values.name);
  if (name.length) errors.name = name;
  if (values.description.length > DESCRIPTION_MAX) errors.description = [`Use at most ${DESCRIPTION_MAX} characters.`];
  else if (isBadText(values.description)) errors.description = ['Use printable text (no NUL character).'];
  if (!VISIBILITIES.includes(values.visibility as Visibility)) errors.visibility = ['Choose private, internal or public.'];
  // A name no organization can have is not looked up (Postgres refuses a NUL in text).
  const owned = isValidName(values.org) ? await ownedOrg(services.db, values.org, user) : ({ refused: 'not_found' } as const);
  // A forged form naming an organization the user does not own gets the API's refusal, as a page.
  if (owned.refused) throw refusedPage(owned.refused, 'Organization not found', 'Only organization owners may create repositories here');
  if (!errors.name && (await findRepository(services.db, owned.org.name, values.name))) errors.name = [`${owned.org.name}/${values.name} already exists.`];
  if (Object.keys(errors).length) return errors;
  try {
    const input = { org: owned.org, name: values.name, description: values.description, visibility: values.visibility as Visibility };
    await createRepository(services, input, user);
    return null;
  } catch (err) {
    if (err instanceof WharfError && (err.code === 'already_exists' || err.code === 'conflict')) return { name: [err.message] };
    throw err;
  }
}

async function newOrgPage(ctx: Context, name: string, errors: FieldErrors = {}) {
  const shown = formErrors(errors, [{ key: 'name', id: 'org-name', label: 'Name' }]);
  renderPage(
    ctx,
    { title: 'New organization', crumbs: [{ label: 'New organization' }], status: Object.keys(errors).length ? 422 : 200 },
    html`<section class="card narrow"><h1>New organization</h1>
    <form method="post" action="/-/orgs/new" class="stack">${csrfField(ctx)}${shown.summary}
      <label for="org-name">Name</label>
      <input id="org-name" name="name" required maxlength="100" autocomplete="off" spellcheck="false" value="${name}" ${shown.attrs('name')}>${shown.message('name')}
      <p class="hint">You become its first owner; add members on its Members page.</p>
      <div><button type="submit" class="primary">Create organization</button></div>
    </form></section>`,
  );
}

/** The site administrator, or the API's 403 for anyone else. */
function requireSiteAdmin(ctx: Context): User {
  const user = requireUser(ctx);
  if (!user.is_admin) throw new PageError(403, 'Not allowed', 'Only site administrators may create organizations');
  return user;
}

/** New repository (`/-/new`, for owners) and New organization (`/-/orgs/new`, for site administrators). */
export function createRoutes(router: Router, services: Services) {
  router.get('/-/new', async (ctx) => {
    const user = requireUser(ctx);
    const org = typeof ctx.query.org === 'string' ? ctx.query.org : ((await ownedOrgNames(services, user))[0] ?? '');
    await newRepoPage(ctx, services, user, { org, name: '', description: '', visibility: 'private' });
  });

  router.post('/-/new', async (ctx) => {
    const user = requireUser(ctx);
    const form = postedForm(ctx);
    const values = {
      org: form.get('org') ?? '',
      name: (form.get('name') ?? '').trim(),
      description: (form.get('description') ?? '').trim(),
      visibility: form.get('visibility') ?? 'private',
    };
    const errors = await createFromForm(services, user, values);
    if (errors) return newRepoPage(ctx, services, user, values, errors);
    redirectWithFlash(ctx, `/${values.org}/${values.name}`, `Repository ${values.org}/${values.name} created.`);
  });

  router.get('/-/orgs/new', async (ctx) => {
    requireSiteAdmin(ctx);
    await newOrgPage(ctx, '');
  });

  router.post('/-/orgs/new', async (ctx) => {
    const user = requireSiteAdmin(ctx);
    const name = (postedForm(ctx).get('name') ?? '').trim();
    const errors = nameErrors(name);
    if (!errors.length && (await findOrg(services.db, name))) errors.push(`Organization ${name} already exists.`);
    if (errors.length) return newOrgPage(ctx, name, { name: errors });
    // The same call as POST /orgs: the creator becomes its owner.
    await createOrg(services.db, name, user.id);
    redirectWithFlash(ctx, `/${name}`, `Organization ${name} created.`);
  });
}
