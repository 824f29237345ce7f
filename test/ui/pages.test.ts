import t from 'tap';
import path from 'node:path';
import { buildRepo, buildUser } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';

t.test('sign in with a token; home, organization and repository pages; sign out', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  await buildRepo(w, 'demo', 'secret-sauce', 'private');
  await w.api('POST', '/api/v1/orgs/demo/repos', { body: { name: 'tricky', description: '<img src=x onerror="window.pwned=1"> & "quotes"' } });
  // Some history: two commits on main, a feature branch, a light and an annotated tag.
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'First commit');
  await g.ok(['tag', 'v0.1'], { cwd: work });
  await g.commit(work, 'Add the <widget> frame');
  await g.ok(['tag', '-a', 'v1.0', '-m', 'one'], { cwd: work });
  await g.ok(['branch', 'feature/x'], { cwd: work });
  await g.ok(['push', '-q', repoDir(w.config.reposDir, 'demo', 'widgets'), 'main', 'feature/x', 'v0.1', 'v1.0'], { cwd: work });

  const { page } = await openBrowser(t);
  await page.goto(`${w.url}/-/login`);
  await page.fill('#token', 'wharf_not-a-real-token');
  await page.click('button[type=submit].primary');
  t.match(await page.textContent('.field-error'), 'unknown, expired or revoked', 'a bad token is refused next to the field');
  await screenshot(page, 'login-error');

  await signIn(page, w);
  t.match(await page.textContent('h1'), 'Your organizations');
  t.ok(await page.isVisible('a[href="/demo"]'), 'the admin sees org demo');
  await screenshot(page, 'home');

  await page.click('a[href="/demo"]');
  await page.waitForURL(`${w.url}/demo`);
  const names = await page.$$eval('.list a.strong', (as) => as.map((a) => a.textContent));
  t.same(names, ['demo/secret-sauce', 'demo/tricky', 'demo/widgets'], 'the owner sees every repository');
  t.equal(await page.evaluate(() => (window as any).pwned), undefined, 'a description is text, never markup');
  t.match(await page.textContent('body'), '<img src=x onerror="window.pwned=1"> & "quotes"', 'shown literally');
  await screenshot(page, 'org');

  await page.click('a[href="/demo/widgets"]');
  await page.waitForURL(`${w.url}/demo/widgets`);
  t.equal(await page.inputValue('#clone-url'), `${w.url}/demo/widgets.git`);
  const body = (await page.textContent('main'))!;
  for (const text of ['main', 'feature/x', 'v0.1', 'v1.0', 'Add the <widget> frame', 'First commit', 'Ada Lovelace'])
    t.match(body, text, `repository page shows ${text}`);
  await screenshot(page, 'repo');

  // Sign out ends the server-side session: the old cookie no longer signs anybody in.
  const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'wharf_session');
  await page.click('text=Sign out');
  await page.waitForURL(`${w.url}/`);
  t.ok(await page.isVisible('a[href="/-/login"]'), 'signed out: a sign-in link');
  const replay = await fetch(`${w.url}/`, { headers: { cookie: `wharf_session=${cookie.value}` } });
  t.notMatch(await replay.text(), 'Your organizations', 'the old session cookie is dead');
  t.equal((await w.running.services.db('ui_sessions').count('* as n'))[0].n, 0);
});

t.test('the session cookie is HttpOnly and SameSite=Strict, and neither it nor the table holds the token', async (t) => {
  const w = await startUiWharf(t);
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'wharf_session');
  t.ok(cookie.httpOnly, 'HttpOnly');
  t.equal(cookie.sameSite, 'Strict');
  t.notMatch(cookie.value, w.adminToken);
  t.notMatch(Buffer.from(cookie.value, 'base64url').toString('latin1'), w.adminToken);
  const rows = await w.running.services.db('ui_sessions').select('*');
  t.equal(rows.length, 1);
  t.notMatch(JSON.stringify(rows), w.adminToken, 'the token is stored encrypted');
  t.notMatch(w.logs.join(''), w.adminToken, 'nor logged');
  // A session in use lives on: after a while without requests, the next one extends it and renews the cookie.
  const db = w.running.services.db;
  const old = Date.now() - 5 * 60_000;
  await db('ui_sessions').update({ last_seen_at: old, expires_at: old + 1000 });
  const stale = await fetch(`${w.url}/`, { headers: { cookie: `wharf_session=${cookie.value}` } });
  t.notMatch(await stale.text(), 'Your organizations', 'an expired session signs nobody in');
  await db('ui_sessions').update({ last_seen_at: old, expires_at: Date.now() + 60_000 });
  const res = await fetch(`${w.url}/`, { headers: { cookie: `wharf_session=${cookie.value}` } });
  t.match(await res.text(), 'Your organizations');
  const renewed = (res.headers.get('set-cookie') ?? '').split(/;\s*/);
  t.match(renewed[0], /^wharf_session=[^;]+$/, 'cookie renewed');
  t.same(renewed.slice(1).sort(), ['HttpOnly', 'Max-Age=1209600', 'Path=/', 'SameSite=Strict'], 'for 14 days, HttpOnly, SameSite=Strict, on the whole site');
  t.ok(Number((await db('ui_sessions').first()).expires_at) > Date.now() + 13 * 24 * 3600_000, 'session extended');
});

t.test('every POST needs its CSRF token: a raw POST gets 403 and changes nothing', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets');
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const post = (p: string, body: string) =>
    fetch(`${w.url}${p}`, { method: 'POST', redirect: 'manual', headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' }, body });
  const noToken = await post('/-/logout', '');
  t.equal(noToken.status, 403, 'sign-out without a token');
  t.match(await noToken.text(), 'could not be verified');
  t.equal((await post('/-/logout', '_csrf=forged')).status, 403, 'with a wrong token');
  t.equal((await post('/demo/widgets/settings/hooks', 'url=http%3A%2F%2F127.0.0.1%2Fx&mode=push&active=on')).status, 403, 'adding a webhook without a token');
  t.equal((await w.running.services.db('ui_sessions').count('* as n'))[0].n, 1, 'the session is still there');
  // The sign-in form is protected too, by the anonymous cookie's seed.
  const login = await fetch(`${w.url}/-/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${w.adminToken}`,
  });
  t.equal(login.status, 403, 'sign-in without a token');
  t.notOk(login.headers.get('set-cookie')?.includes('wharf_session='), 'no session made');
  // With the page's own token the same form works.
  const csrf = await page.getAttribute('form[action="/-/logout"] input[name=_csrf]', 'value');
  t.equal((await post('/-/logout', `_csrf=${encodeURIComponent(csrf!)}`)).status, 303);
});

t.test('signed out: public pages and a sign-in link; private ones are 404; settings ask to sign in', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  await buildRepo(w, 'demo', 'hidden', 'private');
  await buildRepo(w, 'demo', 'staff', 'internal');
  const { page } = await openBrowser(t);
  await page.goto(`${w.url}/`);
  t.ok(await page.isVisible('header a[href="/-/login"]'), 'a sign-in link');
  await page.goto(`${w.url}/demo`);
  t.same(await page.$$eval('.list a.strong', (as) => as.map((a) => a.textContent)), ['demo/widgets'], 'public repositories only');
  t.equal((await page.goto(`${w.url}/demo/widgets`))!.status(), 200);
  t.equal((await page.goto(`${w.url}/demo/hidden`))!.status(), 404, 'a private repository is not revealed');
  t.equal((await page.goto(`${w.url}/demo/staff`))!.status(), 404, 'nor an internal one');
  t.equal((await page.goto(`${w.url}/nobody`))!.status(), 404);
  await page.goto(`${w.url}/demo/widgets/settings/hooks`);
  t.match(page.url(), /\/-\/login\?next=%2Fdemo%2Fwidgets%2Fsettings%2Fhooks$/, 'settings send the browser to sign in');
  await page.fill('#token', w.adminToken);
  await page.click('button[type=submit].primary');
  await page.waitForURL(`${w.url}/demo/widgets/settings/hooks`);
  t.pass('and back after signing in');
  // Unknown pages are HTML for browsers; the API keeps its JSON.
  const missing = await fetch(`${w.url}/a/b/c/d`, { headers: { accept: 'text/html' } });
  t.equal(missing.status, 404);
  t.match(missing.headers.get('content-type'), /text\/html/);
  const api = await fetch(`${w.url}/api/v1/nothing`, { headers: { accept: 'text/html' } });
  t.match(api.headers.get('content-type'), /application\/json/);
});

t.test('a member who is not an owner sees no settings, and the webhook pages refuse them', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'widgets');
  const mia = await buildUser(w, 'mia', { org: 'acme', role: 'member' });
  const { page } = await openBrowser(t);
  await signIn(page, w, mia.token);
  await page.goto(`${w.url}/acme/widgets`);
  t.notOk(await page.isVisible('text=Settings'), 'no settings tab');
  const res = await page.goto(`${w.url}/acme/widgets/settings/hooks`);
  t.equal(res!.status(), 403);
  t.match(await page.textContent('main'), 'owners');
});

t.test('a revoked token ends the session at the next page', async (t) => {
  const w = await startUiWharf(t);
  const mia = await buildUser(w, 'mia', { org: 'acme', role: 'owner' });
  const { page } = await openBrowser(t);
  await signIn(page, w, mia.token);
  await w.running.services.db('access_tokens').where('user_id', mia.user.id).update({ revoked_at: Date.now() });
  await page.goto(`${w.url}/acme`);
  t.match(page.url(), /\/-\/login/);
  t.match(await page.textContent('.flash'), 'sign in again');
  t.equal((await w.running.services.db('ui_sessions').count('* as n'))[0].n, 0);
});
