import type { Context } from 'koa';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { formErrors, type FieldErrors, type FormField } from './formErrors.ts';

/** Where an import comes from: any Git URL, or a repository on one of three hosted services. */
export type Source = 'git' | 'github' | 'gitlab' | 'bitbucket';

/**
 * Hosted services: the clone URL of `owner/repo`, and the user name each expects beside a
 * token given as the password (GitHub app/PAT tokens, GitLab OAuth and personal tokens, Bitbucket access tokens).
 */
export const HOSTED: Record<Exclude<Source, 'git'>, { label: string; host: string; username: string }> = {
  github: { label: 'GitHub', host: 'github.com', username: 'x-access-token' },
  gitlab: { label: 'GitLab', host: 'gitlab.com', username: 'oauth2' },
  bitbucket: { label: 'Bitbucket', host: 'bitbucket.org', username: 'x-token-auth' },
};

/** The import form's values. */
export interface ImportValues {
  source: Source;
  url: string;
  path: string;
  username: string;
  password: string;
  token: string;
  org: string;
  name: string;
  visibility: 'public' | 'internal' | 'private';
  /** The source's LFS endpoint when the guess from the clone URL is wrong; empty to guess. */
  lfsUrl: string;
  /** Keep the repository a mirror of its source until the cutover (SPEC §8.1.1). */
  mirror: boolean;
  /** How often the mirror syncs ("8h"); empty for the default. */
  mirrorInterval: string;
}

/** Reads the submitted form. */
export function importValuesFromForm(form: URLSearchParams): ImportValues {
  const source = form.get('source');
  const visibility = form.get('visibility');
  return {
    source: source === 'github' || source === 'gitlab' || source === 'bitbucket' ? source : 'git',
    url: (form.get('url') ?? '').trim(),
    path: (form.get('path') ?? '').trim().replace(/^\/+|\/+$/g, ''),
    username: (form.get('username') ?? '').trim(),
    password: form.get('password') ?? '',
    token: (form.get('token') ?? '').trim(),
    org: (form.get('org') ?? '').trim(),
    name: (form.get('name') ?? '').trim(),
    visibility: visibility === 'public' || visibility === 'internal' ? visibility : 'private',
    lfsUrl: (form.get('lfs_url') ?? '').trim(),
    mirror: form.get('mirror') === 'on',
    mirrorInterval: (form.get('mirror_interval') ?? '').trim(),
  };
}

/** The fields of an import request the form fills in: text, and `mirror`. */
export type ImportBody = Record<string, string> & { mirror?: boolean };

/** The body of POST /api/v1/repos/import for these values, or the form's own errors. */
export function importRequest(values: ImportValues): { body?: ImportBody; errors?: FieldErrors } {
  const errors: FieldErrors = {};
  const body: ImportBody = { target_org: values.org, visibility: values.visibility };
  if (values.source === 'git') {
    if (!values.url) errors.url = ['Enter the URL to clone from.'];
    body.source_url = values.url;
    if (values.username || values.password) {
      body.auth_username = values.username || 'git';
      body.auth_password = values.password;
    }
  } else {
    const hosted = HOSTED[values.source];
    // GitLab repositories may sit in nested groups: group/subgroup/project.
    const pattern = values.source === 'gitlab' ? /^[\w.-]+(\/[\w.-]+)+$/ : /^[\w.-]+\/[\w.-]+$/;
    if (!pattern.test(values.path) || values.path.includes('..')) errors.path = ['Enter owner/repository, e.g. octocat/hello-world.'];
    body.source_url = `https://${hosted.host}/${values.path.replace(/\.git$/, '')}.git`;
    if (values.token) {
      body.auth_username = hosted.username;
      body.auth_password = values.token;
    }
  }
  const derived =
    (values.source === 'git' ? values.url : values.path)
      .replace(/\/+$/, '')
      .split(/[/:]/)
      .pop()
      ?.replace(/\.git$/, '') ?? '';
  body.name = values.name || derived;
  if (values.lfsUrl) body.lfs_url = values.lfsUrl;
  // The interval counts only with the box checked (the script disables the field otherwise; without one it is ignored here).
  if (values.mirror) {
    body.mirror = true;
    if (values.mirrorInterval) body.mirror_interval = values.mirrorInterval;
  }
  if (!body.name) errors.name = [`The source's address gives no name to take: enter a name for the new repository.`];
  if (!values.org) errors.org = ['Choose an organization.'];
  return Object.keys(errors).length ? { errors } : { body };
}

/** The form's fields in the order they appear, as its errors name them. */
const FIELDS: FormField[] = [
  { key: 'url', id: 'url', label: 'Clone URL' },
  { key: 'username', id: 'username', label: 'User name' },
  { key: 'password', id: 'password', label: 'Password or token' },
  { key: 'path', id: 'path', label: 'Repository' },
  { key: 'token', id: 'token', label: 'Access token' },
  { key: 'org', id: 'org', label: 'Organization' },
  { key: 'name', id: 'name', label: 'Repository name' },
  { key: 'lfsUrl', id: 'lfs_url', label: 'LFS URL' },
  { key: 'mirrorInterval', id: 'mirror_interval', label: 'Sync every' },
];

/** The import form. Fields of the other sources stay in the page (no script needed); CSS shows only the chosen source's. */
export function importForm(ctx: Context, values: ImportValues, orgs: string[], errors: FieldErrors): SafeHtml {
  const radio = (name: string, value: string, current: string, label: string) =>
    html`<label class="choice"><input type="radio" name="${name}" value="${value}" ${value === current ? html`checked` : ''}> ${label}</label>`;
  const shown = formErrors(errors, FIELDS);
  const err = (_: FieldErrors, key: string) => shown.message(key);
  const aria = (_: FieldErrors, key: string) => shown.attrs(key);
  const orgOptions = (orgs.includes(values.org) || !values.org ? orgs : [values.org, ...orgs]).map(
    (o) => html`<option ${o === values.org ? html`selected` : ''}>${o}</option>`,
  );
  return html`<form method="post" action="/-/import" class="stack import-form" autocomplete="off">
  ${csrfField(ctx)}${shown.summary}
  <fieldset class="sources"><legend>Source</legend>
    ${radio('source', 'git', values.source, 'Git URL')}${radio('source', 'github', values.source, 'GitHub')}${radio('source', 'gitlab', values.source, 'GitLab')}${radio('source', 'bitbucket', values.source, 'Bitbucket')}
  </fieldset>
  <div class="source-git stack">
    <label for="url">Clone URL <span class="muted">(http, https or git)</span></label>
    <input id="url" name="url" placeholder="https://git.example.com/team/project.git" value="${values.url}" ${aria(errors, 'url')}>${err(errors, 'url')}
    <details ${values.username || errors.username || errors.password ? html`open` : ''}><summary>Credentials, if the source needs them</summary>
      <div class="stack"><label for="username">User name</label><input id="username" name="username" value="${values.username}" ${aria(errors, 'username')}>${err(errors, 'username')}
      <label for="password">Password or token</label><input id="password" name="password" type="password" autocomplete="new-password" ${aria(errors, 'password')}>${err(errors, 'password')}</div>
    </details>
  </div>
  <div class="source-hosted stack">
    <label for="path">Repository <span class="muted">(owner/repository)</span></label>
    <input id="path" name="path" placeholder="octocat/hello-world" value="${values.path}" ${aria(errors, 'path')}>${err(errors, 'path')}
    <label for="token">Access token <span class="muted">(needed for private repositories)</span></label>
    <input id="token" name="token" type="password" autocomplete="new-password" ${aria(errors, 'token')}>${err(errors, 'token')}
  </div>
  <label for="org">Organization</label>
  <select id="org" name="org" ${aria(errors, 'org')}>${orgOptions}</select>${err(errors, 'org')}
  <label for="name">Repository name <span class="muted">(empty: the source's name; letters, digits, ".", "_" and "-", up to 100 characters)</span></label>
  <input id="name" name="name" value="${values.name}" maxlength="100" ${aria(errors, 'name')}>${err(errors, 'name')}
  <fieldset><legend>Visibility</legend>
    ${radio('visibility', 'public', values.visibility, 'Public — anyone can see and clone it')}
    ${radio('visibility', 'internal', values.visibility, 'Internal — any signed-in user can see it')}
    ${radio('visibility', 'private', values.visibility, 'Private — members of the organization only')}
    ${err(errors, 'visibility')}
  </fieldset>
  <details ${values.lfsUrl || errors.lfsUrl ? html`open` : ''}><summary>LFS endpoint, if not the usual one</summary>
    <div class="stack"><label for="lfs_url">LFS URL <span class="muted">(empty: <code>&lt;clone URL&gt;/info/lfs</code>; git:// sources usually need one)</span></label>
    <input id="lfs_url" name="lfs_url" placeholder="https://git.example.com/team/project.git/info/lfs" value="${values.lfsUrl}" ${aria(errors, 'lfsUrl')}>${err(errors, 'lfsUrl')}</div>
  </details>
  <fieldset class="stack"><legend>Mirror</legend>
    <label class="choice"><input type="checkbox" id="mirror" name="mirror" ${values.mirror ? html`checked` : ''}> Keep in sync until I switch over</label>
    <p class="muted">The repository follows its source (branches, tags, LFS objects, and a push event per changed ref) and refuses pushes until you stop mirroring.</p>
    <label for="mirror_interval">Sync every <span class="muted">(with Keep in sync only; a duration such as 10m, 8h or 1d; at least 1m; empty: 8h)</span></label>
    <input id="mirror_interval" name="mirror_interval" placeholder="8h" value="${values.mirrorInterval}" maxlength="32" data-enabled-by="mirror" ${aria(errors, 'mirrorInterval')}>${err(errors, 'mirrorInterval')}
  </fieldset>
  <div class="actions"><button type="submit" class="primary">Begin import</button></div>
</form>`;
}
