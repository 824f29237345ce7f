import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import type { User } from '../../domain/accounts.ts';
import { issueToken, listTokens, revokeToken, type IssuedToken } from '../../domain/tokens.ts';
import { isBadText } from '../../http/inputGuard.ts';
import { clearCookie } from '../cookies.ts';
import { postedForm, redirectWithFlash, SESSION_COOKIE, ui } from '../context.ts';
import { PageError } from '../errors.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { timeTag } from '../format.ts';
import { formErrors, type FieldErrors } from '../pages/formErrors.ts';
import { destroySession } from '../session.ts';
import { requireUser } from '../user.ts';

const DAY_MS = 86_400_000;

/** The lifetimes the form offers, within the API's limit of 366 days; "never" as the API allows it (no `expires_in`). */
const EXPIRIES: { value: string; label: string; ms?: number }[] = [
  { value: '7d', label: '7 days', ms: 7 * DAY_MS },
  { value: '30d', label: '30 days', ms: 30 * DAY_MS },
  { value: '90d', label: '90 days', ms: 90 * DAY_MS },
  { value: '365d', label: '1 year', ms: 365 * DAY_MS },
  { value: 'never', label: 'No expiry' },
];
const DEFAULT_EXPIRY = '30d';
const NAME_MAX = 100;

interface TokenValues {
  name: string;
  expiry: string;
}

function expiryChoices(chosen: string): SafeHtml[] {
  return EXPIRIES.map((e) => html`<option value="${e.value}" ${e.value === chosen ? html`selected` : ''}>${e.label}</option>`);
}

/** The page: the form (with its errors), the token just created (shown this once), and the list. */
async function tokensPage(ctx: Context, services: Services, user: User, values: TokenValues, errors: FieldErrors = {}, issued?: IssuedToken) {
  const tokens = await listTokens(services.db, user.id);
  const shown = formErrors(errors, [
    { key: 'name', id: 'token-name', label: 'Name' },
    { key: 'expiry', id: 'token-expiry', label: 'Expires' },
  ]);
  const now = Date.now();
  const fresh = issued
    ? html`<section class="card" aria-labelledby="new-token-heading"><h2 id="new-token-heading">New token “${issued.name}”</h2>
      <p>Copy it now: it is shown only on this page, and Wharf keeps only its hash.</p>
      <label for="new-token" class="strong">Token</label>
      <div class="copy"><input id="new-token" readonly value="${issued.token}" class="secret" spellcheck="false"><button type="button" class="js-only" data-copy="#new-token">Copy</button></div>
      <p class="muted">Use it to sign in here, as <code>Authorization: Bearer</code> for the API, or as the password of <code>git push</code> and <code>git clone</code> over HTTP (any user name).</p></section>`
    : '';
  const rows = tokens.map((t) => {
    const current = t.id === user.token_id;
    const expired = t.expires_at !== null && t.expires_at <= now;
    return html`<tr><td data-label="Name"><span class="strong">${t.name}</span>${current ? html` <span class="badge">this browser</span>` : ''}</td>
      <td data-label="Created">${timeTag(t.created_at)}</td>
      <td data-label="Expires">${t.expires_at === null ? 'never' : expired ? html`<span class="result bad">expired</span> ${timeTag(t.expires_at)}` : timeTag(t.expires_at)}</td>
      <td data-label="Last used">${t.last_used_at === null ? 'never' : timeTag(t.last_used_at)}</td>
      <td class="row-actions"><form method="post" action="/-/tokens/${t.id}/revoke" class="inline">${csrfField(ctx)}<button type="submit" class="danger small" aria-label="Revoke ${t.name}${current ? ' (signs this browser out)' : ''}">Revoke</button></form></td></tr>`;
  });
  const list = tokens.length
    ? html`<table class="table stacking"><thead><tr><th>Name</th><th>Created</th><th>Expires</th><th>Last used</th><th><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>
      ${user.token_id ? html`<p class="muted">Revoking the token marked “this browser” signs this browser out: the web UI acts with the token it was signed in with.</p>` : ''}`
    : html`<p class="empty">No tokens.</p>`;
  renderPage(
    ctx,
    { title: 'Access tokens', crumbs: [{ label: 'Tokens' }], status: Object.keys(errors).length ? 422 : issued ? 201 : 200 },
    html`<h1>Access tokens</h1>${fresh}
    <section class="card" aria-labelledby="create-heading"><h2 id="create-heading">New token</h2>
    <form method="post" action="/-/tokens" class="stack">${csrfField(ctx)}${shown.summary}
      <label for="token-name">Name</label>
      <input id="token-name" name="name" maxlength="${NAME_MAX}" required value="${issued ? '' : values.name}" aria-describedby="token-name-hint" ${shown.attrs('name')}>
      <p class="hint" id="token-name-hint">What it is for, such as “laptop” or “CI”.</p>${shown.message('name')}
      <label for="token-expiry">Expires</label>
      <select id="token-expiry" name="expiry" ${shown.attrs('expiry')}>${expiryChoices(issued ? DEFAULT_EXPIRY : values.expiry)}</select>${shown.message('expiry')}
      <div><button type="submit" class="primary">Create token</button></div>
    </form></section>
    <section class="card" aria-labelledby="list-heading"><h2 id="list-heading">Your tokens</h2>${list}</section>`,
  );
}

/** A token id from the path, or the page's 404. */
function tokenId(value: string | undefined): number {
  if (!value || !/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) throw new PageError(404, 'Not found', 'No such token.');
  return Number(value);
}

/** The signed-in user's tokens: create (shown once, in the answer to the form only), list, revoke. */
export function tokenRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/-/tokens', async (ctx) => {
    await tokensPage(ctx, services, requireUser(ctx), { name: '', expiry: DEFAULT_EXPIRY });
  });

  router.post('/-/tokens', async (ctx) => {
    const user = requireUser(ctx);
    const form = postedForm(ctx);
    const values = { name: (form.get('name') ?? '').trim(), expiry: form.get('expiry') ?? DEFAULT_EXPIRY };
    const errors: FieldErrors = {};
    const expiry = EXPIRIES.find((e) => e.value === values.expiry);
    if (!values.name) errors.name = ['Enter a name.'];
    else if (values.name.length > NAME_MAX) errors.name = [`Use at most ${NAME_MAX} characters.`];
    else if (isBadText(values.name)) errors.name = ['Use printable text (no NUL character).'];
    // As Gitea: names are unique among one's live tokens, so the list tells them apart and a resent form makes no second token.
    else if ((await listTokens(db, user.id)).some((t) => t.name === values.name)) errors.name = ['You already have a token with this name.'];
    if (!expiry) errors.expiry = ['Choose one of the offered lifetimes.'];
    if (Object.keys(errors).length) return tokensPage(ctx, services, user, values, errors);
    const issued = await issueToken(db, user.id, values.name, expiry!.ms);
    // The secret goes into this answer only: no redirect, no cookie, no flash.
    await tokensPage(ctx, services, user, values, {}, issued);
  });

  router.post('/-/tokens/:id/revoke', async (ctx) => {
    const user = requireUser(ctx);
    const id = tokenId(ctx.params.id);
    if (!(await revokeToken(db, user.id, id))) throw new PageError(404, 'Not found', 'No such token.');
    const session = ui(ctx).session;
    if (id === user.token_id && session) {
      // This browser acted with that token: it stops working now, so the session ends with it.
      await destroySession(db, session.id);
      clearCookie(ctx, SESSION_COOKIE, ui(ctx).secure);
      return redirectWithFlash(ctx, '/-/login', 'Token revoked. It was the token this browser was signed in with, so you are signed out.');
    }
    redirectWithFlash(ctx, '/-/tokens', 'Token revoked.');
  });
}
