import t from 'tap';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buildRepo, buildUser, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';

/** A page of its own (its own cookies) signed in with `token`. */
async function signedIn(browser: Browser, w: TestWharf, token: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  await signIn(page, w, token);
  return page;
}

/** Submits the form a button belongs to and waits for the page that answers. */
async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.waitForNavigation(), page.click(selector)]);
}

async function flash(page: Page): Promise<string> {
  return ((await page.textContent('.flash')) ?? '').trim();
}

t.test('tokens: create one (shown once), use it with git and the API, revoke it; revoking the session’s own token signs out', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'private-repo', 'private');
  const { browser, page } = await openBrowser(t);
  await signIn(page, w);

  await Promise.all([page.waitForURL(`${w.url}/-/tokens`), page.click('header.top a[href="/-/tokens"]')]);
  t.match(await page.textContent('h1'), 'Access tokens', 'the header links to the tokens page');
  await expectAccessible(t, page, 'tokens');

  // An empty name is refused on the form.
  await page.fill('#token-name', ' ');
  await page.$eval('form[action="/-/tokens"]', (f) => f.setAttribute('novalidate', ''));
  await submit(page, 'form[action="/-/tokens"] button[type=submit]');
  t.match(await page.textContent('#name-error'), 'Enter a name', 'the name is required');

  await page.fill('#token-name', 'laptop');
  await page.selectOption('#token-expiry', '7d');
  await submit(page, 'form[action="/-/tokens"] button[type=submit]');
  const secret = await page.inputValue('#new-token');
  t.match(secret, /^wharf_[A-Za-z0-9_-]{43}$/, 'the new token is shown');
  t.ok(await page.isVisible('button[data-copy="#new-token"]'), 'with a copy button');
  await expectAccessible(t, page, 'tokens-created');
  const row = page.locator('tbody tr', { hasText: 'laptop' });
  t.match(await row.textContent(), /never/, 'listed, never used yet');
  const expires = Date.parse((await row.locator('td[data-label="Expires"] time').getAttribute('datetime'))!);
  t.ok(Math.abs(expires - (Date.now() + 7 * 86_400_000)) < 120_000, 'expires in 7 days');

  // Shown once: the next visit has no trace of it, nor does any cookie.
  await page.goto(`${w.url}/-/tokens`);
  t.notOk(await page.isVisible('#new-token'), 'no token field on the next visit');
  t.notMatch(await page.content(), secret, 'the secret is not on the page any more');
  t.notOk(
    (await page.context().cookies()).some((c) => decodeURIComponent(c.value).includes(secret)),
    'never in a cookie',
  );

  // The same name again is refused (a resent form makes no second token).
  await page.fill('#token-name', 'laptop');
  await submit(page, 'form[action="/-/tokens"] button[type=submit]');
  t.match(await page.textContent('#name-error'), 'already have a token with this name');
  t.notOk(await page.isVisible('#new-token'), 'no token made');

  // The token works for the API and for git.
  t.equal((await w.api('GET', '/api/v1/user', { token: secret })).body.login, 'admin');
  const g = gitClient(t);
  const listed = await g.run(['ls-remote', repoUrl(w, 'demo/private-repo', secret)]);
  t.equal(listed.code, 0, `git ls-remote with the token works: ${listed.stderr}`);
  await page.reload();
  t.notMatch(await page.locator('tbody tr', { hasText: 'laptop' }).locator('td[data-label="Last used"]').textContent(), 'never', 'last use recorded');

  await submit(page, 'button[aria-label="Revoke laptop"]');
  t.equal(await flash(page), 'Token revoked.');
  t.notOk(await page.isVisible('button[aria-label="Revoke laptop"]'), 'gone from the list');
  t.equal((await w.api('GET', '/api/v1/user', { token: secret })).status, 401, 'the API refuses it now');
  const refused = await g.run(['ls-remote', repoUrl(w, 'demo/private-repo', secret)]);
  t.not(refused.code, 0, 'and git too');

  // A forged revoke (no CSRF token) changes nothing.
  const other = await w.api('POST', '/api/v1/user/tokens', { body: { name: 'kept' } });
  const forged = await page.request.post(`${w.url}/-/tokens/${other.body.id}/revoke`, { form: { _csrf: 'forged' }, maxRedirects: 0 });
  t.equal(forged.status(), 403, 'a forged revoke is refused');
  t.equal((await w.api('GET', '/api/v1/user', { token: other.body.token })).status, 200, 'the token still works');
  // Another user's token id: 404, and it still works.
  const bob = await buildUser(w, 'bob');
  const bobPage = await signedIn(browser, w, bob.token);
  await bobPage.goto(`${w.url}/-/tokens`);
  const bobCsrf = await bobPage.inputValue('form[action="/-/tokens"] input[name=_csrf]');
  const cross = await bobPage.request.post(`${w.url}/-/tokens/${other.body.id}/revoke`, { form: { _csrf: bobCsrf }, maxRedirects: 0 });
  t.equal(cross.status(), 404, "another user's token is not found");
  t.equal((await w.api('GET', '/api/v1/user', { token: other.body.token })).status, 200);

  // Bob revokes the token his browser signed in with: the session ends with it.
  t.ok(await bobPage.isVisible('tbody tr .badge'), 'the session’s token is marked');
  await submit(bobPage, 'button[aria-label^="Revoke test"]');
  t.equal(new URL(bobPage.url()).pathname, '/-/login', 'sent to sign in');
  t.match(await flash(bobPage), 'signed out');
  t.equal((await w.api('GET', '/api/v1/user', { token: bob.token })).status, 401);
  await bobPage.goto(`${w.url}/-/tokens`);
  t.equal(new URL(bobPage.url()).pathname, '/-/login', 'no longer signed in');
});

t.test('members: an owner adds, promotes, demotes and removes; the last owner stays; members see the list only', async (t) => {
  const w = await startUiWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const bob = await buildUser(w, 'bob');
  const sam = await buildUser(w, 'sam', { org: 'other', role: 'owner' });
  const { browser } = await openBrowser(t);
  const page = await signedIn(browser, w, ann.token);

  await page.goto(`${w.url}/acme`);
  await Promise.all([page.waitForURL(`${w.url}/-/orgs/acme/members`), page.click('a[href="/-/orgs/acme/members"]')]);
  t.match(await page.textContent('h1'), 'Members of acme');
  await expectAccessible(t, page, 'members-owner');

  await page.fill('#member-login', 'nobody');
  await submit(page, 'form[action="/-/orgs/acme/members"] button[type=submit]');
  t.match(await page.textContent('#login-error'), 'No user has this login');
  await expectAccessible(t, page, 'members-error');

  await page.fill('#member-login', 'bob');
  await page.selectOption('#member-role', 'member');
  await submit(page, 'form[action="/-/orgs/acme/members"] button[type=submit]');
  t.equal(await flash(page), 'bob added as a member.');
  const roles = async () =>
    page.$$eval('tbody tr', (rows) => rows.map((r) => `${r.querySelector('.strong')!.textContent}:${r.querySelector('td[data-label="Role"]')!.textContent}`));
  t.same(await roles(), ['ann:Owner', 'bob:Member']);

  const bobRow = page.locator('tbody tr', { hasText: 'bob' });
  await bobRow.locator('select').selectOption('owner');
  await submit(page, 'form[action="/-/orgs/acme/members/bob/role"] button');
  t.equal(await flash(page), 'bob is now an owner.');
  t.same(await roles(), ['ann:Owner', 'bob:Owner']);
  await page.locator('tbody tr', { hasText: 'bob' }).locator('select').selectOption('member');
  await submit(page, 'form[action="/-/orgs/acme/members/bob/role"] button');
  t.same(await roles(), ['ann:Owner', 'bob:Member'], 'and back');

  // Ann is the last owner: she can be neither demoted nor removed.
  await page.locator('tbody tr', { hasText: 'ann' }).locator('select').selectOption('member');
  await submit(page, 'form[action="/-/orgs/acme/members/ann/role"] button');
  t.match(await flash(page), 'An organization keeps at least one owner', 'demoting the last owner is refused');
  await submit(page, 'button[aria-label="Remove ann"]');
  t.match(await flash(page), 'at least one owner', 'removing the last owner is refused');
  t.same(await roles(), ['ann:Owner', 'bob:Member'], 'nothing changed');

  // Bob, a member, sees the list but no form, and his forged changes are refused.
  const bobPage = await signedIn(browser, w, bob.token);
  await bobPage.goto(`${w.url}/acme`);
  await Promise.all([bobPage.waitForURL(`${w.url}/-/orgs/acme/members`), bobPage.click('a[href="/-/orgs/acme/members"]')]);
  t.same(await bobPage.$$eval('tbody tr .strong', (els) => els.map((e) => e.textContent)), ['ann', 'bob'], 'a member sees the members');
  t.equal(await bobPage.locator('main form').count(), 0, 'and no form');
  await expectAccessible(t, bobPage, 'members-member');
  const csrf = await bobPage.inputValue('header form input[name=_csrf]');
  for (const [action, form] of [
    ['/-/orgs/acme/members', { login: 'bob', role: 'owner' }],
    ['/-/orgs/acme/members/bob/role', { role: 'owner' }],
    ['/-/orgs/acme/members/ann/remove', {}],
  ] as const) {
    const forged = await bobPage.request.post(`${w.url}${action}`, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
    t.equal(forged.status(), 403, `a member's POST to ${action} is refused`);
  }
  t.same(
    (await w.api('GET', '/api/v1/orgs/acme/members')).body.map((m: { login: string; role: string }) => `${m.login}:${m.role}`),
    ['ann:owner', 'bob:member'],
  );

  // Another organization's owner gets the 404 of an organization they cannot see.
  const samPage = await signedIn(browser, w, sam.token);
  const hidden = await samPage.goto(`${w.url}/-/orgs/acme/members`);
  t.equal(hidden!.status(), 404, 'outsiders get a 404');

  await submit(page, 'button[aria-label="Remove bob"]');
  t.equal(await flash(page), 'bob removed from acme.');
  t.same(await roles(), ['ann:Owner']);
});

t.test('New repository (then git push to it) and New organization (site administrators only)', async (t) => {
  const w = await startUiWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const bob = await buildUser(w, 'bob', { org: 'acme', role: 'member' });
  const { browser, page } = await openBrowser(t);
  await signIn(page, w);

  // New organization, from the start page (its buttons fit beside the heading).
  await expectAccessible(t, page, 'home-admin');
  await Promise.all([page.waitForURL(`${w.url}/-/orgs/new`), page.click('a[href="/-/orgs/new"]')]);
  await expectAccessible(t, page, 'new-org');
  await page.fill('#org-name', '-bad');
  await submit(page, 'form[action="/-/orgs/new"] button[type=submit]');
  t.match(await page.textContent('#name-error'), 'must be letters, digits', 'a bad name is refused on the form');
  await page.fill('#org-name', 'acme');
  await submit(page, 'form[action="/-/orgs/new"] button[type=submit]');
  t.match(await page.textContent('#name-error'), 'already exists');
  await page.fill('#org-name', 'harbour');
  await submit(page, 'form[action="/-/orgs/new"] button[type=submit]');
  t.equal(new URL(page.url()).pathname, '/harbour');
  t.equal(await flash(page), 'Organization harbour created.');
  t.same((await w.api('GET', '/api/v1/orgs/harbour/members')).body, [{ org: 'harbour', login: 'admin', role: 'owner' }], 'its creator owns it');

  // A normal user: no button, and the page and its POST are refused as the API refuses them.
  const annPage = await signedIn(browser, w, ann.token);
  t.equal(await annPage.locator('a[href="/-/orgs/new"]').count(), 0, 'no New organization button');
  t.equal((await annPage.goto(`${w.url}/-/orgs/new`))!.status(), 403);
  t.match(await annPage.textContent('main'), 'Only site administrators may create organizations');
  const csrf = await annPage.inputValue('header form input[name=_csrf]');
  const forged = await annPage.request.post(`${w.url}/-/orgs/new`, { form: { _csrf: csrf, name: 'sneaky' }, maxRedirects: 0 });
  t.equal(forged.status(), 403);
  t.equal((await w.api('GET', '/api/v1/orgs/sneaky/repos')).status, 404, 'no organization made');

  // New repository, from the organization page, as its owner (four buttons beside the heading).
  await annPage.goto(`${w.url}/acme`);
  await expectAccessible(t, annPage, 'org-owner');
  await Promise.all([annPage.waitForURL(`${w.url}/-/new?org=acme`), annPage.click('a[href="/-/new?org=acme"]')]);
  await expectAccessible(t, annPage, 'new-repo');
  await annPage.fill('#repo-name', 'bad..name');
  await submit(annPage, 'form[action="/-/new"] button[type=submit]');
  t.match(await annPage.textContent('#name-error'), 'no ".."', 'name errors shown on the form');
  await expectAccessible(t, annPage, 'new-repo-error');
  await annPage.fill('#repo-name', 'fresh');
  await annPage.fill('#repo-description', 'Made in the browser');
  await annPage.check('#visibility-internal');
  await submit(annPage, 'form[action="/-/new"] button[type=submit]');
  t.equal(new URL(annPage.url()).pathname, '/acme/fresh', 'the new repository page');
  const made = await w.api('GET', '/api/v1/repos/acme/fresh');
  t.equal(made.body.visibility, 'internal');
  t.equal(made.body.description, 'Made in the browser');

  await annPage.goto(`${w.url}/-/new?org=acme`);
  await annPage.fill('#repo-name', 'fresh');
  await submit(annPage, 'form[action="/-/new"] button[type=submit]');
  t.match(await annPage.textContent('#name-error'), 'acme/fresh already exists');

  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'First commit');
  const pushed = await g.run(['push', repoUrl(w, 'acme/fresh', ann.token), 'main'], { cwd: work });
  t.equal(pushed.code, 0, `git push to the new repository works: ${pushed.stderr}`);
  await annPage.goto(`${w.url}/acme/fresh`);
  t.match(await annPage.textContent('main'), 'First commit');

  // A member sees no New repository button, and a forged form is refused.
  const bobPage = await signedIn(browser, w, bob.token);
  await bobPage.goto(`${w.url}/acme`);
  t.equal(await bobPage.locator('a[href^="/-/new"]').count(), 0, 'no New repository button for a member');
  const bobCsrf = await bobPage.inputValue('header form input[name=_csrf]');
  const refused = await bobPage.request.post(`${w.url}/-/new`, {
    form: { _csrf: bobCsrf, org: 'acme', name: 'sneaky', visibility: 'private' },
    maxRedirects: 0,
  });
  t.equal(refused.status(), 403);
  const hidden = await bobPage.request.post(`${w.url}/-/new`, {
    form: { _csrf: bobCsrf, org: 'harbour', name: 'sneaky', visibility: 'private' },
    maxRedirects: 0,
  });
  t.equal(hidden.status(), 404, 'an organization one is not in is not found');
  t.equal((await w.api('GET', '/api/v1/repos/acme/sneaky')).status, 404, 'nothing made');
});

t.test('bad input to every form of these pages is a 4xx page and writes nothing', async (t) => {
  const w = await startUiWharf(t);
  await buildUser(w, 'bob', { org: 'demo', role: 'member' });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const csrf = await page.inputValue('header form input[name=_csrf]');
  const db = w.running.services.db;
  const counts = async () => {
    const tables = ['access_tokens', 'memberships', 'orgs', 'repositories'];
    return Promise.all(tables.map(async (table) => `${table}:${(await db(table).count({ n: '*' }))[0].n}`));
  };
  const before = await counts();
  const junk = ['', 'a\u0000b', 'x'.repeat(5000), '../etc', '-dash', 'é'.repeat(101)];
  const forms: [string, string[]][] = [
    ['/-/tokens', ['name', 'expiry']],
    ['/-/orgs/demo/members', ['login', 'role']],
    ['/-/orgs/demo/members/bob/role', ['role']],
    ['/-/orgs/demo/members/nobody/remove', []],
    ['/-/new', ['org', 'name', 'description', 'visibility']],
    ['/-/orgs/new', ['name']],
  ];
  for (const [action, fields] of forms)
    for (const value of junk) {
      const form: Record<string, string> = { _csrf: csrf };
      for (const field of fields) form[field] = value;
      const answer = await page.request.post(`${w.url}${action}`, { form, maxRedirects: 0 });
      t.ok(answer.status() >= 400 && answer.status() < 500, `POST ${action} with ${JSON.stringify(value.slice(0, 12))}: ${answer.status()}`);
    }
  t.same(await counts(), before, 'nothing was written');
});
