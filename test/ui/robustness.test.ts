import t from 'tap';
import { buildRepo } from '../helpers/wharf.ts';
import type { TestWharf } from '../helpers/wharf.ts';
import { startUiWharf } from './browser.ts';

/** Signs in with plain HTTP requests, as a browser would; returns the cookies and the page's CSRF token. */
async function signInByFetch(w: TestWharf): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${w.url}/-/login`);
  const anon = /wharf_anon=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')![1];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
  const res = await fetch(`${w.url}/-/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `wharf_anon=${anon}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token: w.adminToken, next: '/' }).toString(),
  });
  const session = /wharf_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1];
  const home = await fetch(`${w.url}/`, { headers: { cookie: `wharf_session=${session}` } });
  return { cookie: `wharf_session=${session}`, csrf: /name="_csrf" value="([^"]+)"/.exec(await home.text())![1] };
}

t.test('odd paths and odd forms never give a 5xx', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'widgets', 'public');
  const { cookie, csrf } = await signInByFetch(w);
  const paths = [
    '/%3Cscript%3E',
    '/demo/%2e%2e',
    '/demo/widgets/settings/hooks/abc',
    '/demo/widgets/settings/hooks/0',
    '/demo/widgets/settings/hooks/99999999999999999999',
    '/demo/widgets/settings/hooks/5/edit',
    '/demo/widgets/settings/hooks/5/delete',
    '/demo/widgets/settings/hooks/1?cursor=%00&status=nope',
    '/-/import/abc',
    '/-/import/123456',
    '/-/import/1/status',
    '/-/login?next=//evil.example',
    '/-/static/../../package.json',
    `/${'a'.repeat(300)}`,
    '/demo/widgets.git',
  ];
  for (const p of paths) {
    for (const headers of [{ cookie }, {}] as Record<string, string>[]) {
      const res = await fetch(`${w.url}${p}`, { headers: { ...headers, accept: 'text/html' }, redirect: 'manual' });
      t.ok(res.status < 500, `GET ${p} ${headers.cookie ? 'signed in' : 'signed out'}: ${res.status}`);
    }
  }
  const post = (p: string, body: string, type = 'application/x-www-form-urlencoded') =>
    fetch(`${w.url}${p}`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': type }, body });
  const forms: [string, string, string?][] = [
    ['/demo/widgets/settings/hooks', `_csrf=${csrf}`],
    ['/demo/widgets/settings/hooks', `_csrf=${csrf}&url=${'x'.repeat(5000)}&mode=select&events=nope`],
    ['/demo/widgets/settings/hooks', `_csrf=${csrf}&url=http%3A%2F%2Fuser%3Apw%40127.0.0.1%2F&mode=all`],
    ['/demo/widgets/settings/hooks/77', `_csrf=${csrf}&url=http%3A%2F%2F127.0.0.1%2F&mode=push`],
    ['/demo/widgets/settings/hooks/77/delete', `_csrf=${csrf}`],
    ['/demo/widgets/settings/hooks/77/ping', `_csrf=${csrf}`],
    ['/demo/widgets/settings/hooks/77/deliveries/x/redeliver', `_csrf=${csrf}`],
    ['/-/import', `_csrf=${csrf}&source=svn&url=ext%3A%3Ash&org=nope&name=..&visibility=secret`],
    ['/-/import', `_csrf=${csrf}&source=git&url=-uhelp&org=demo&name=x`],
    ['/-/import/99/cancel', `_csrf=${csrf}`],
    ['/-/login', `_csrf=${csrf}&token=${'t'.repeat(10000)}`],
    ['/-/logout', `{"_csrf":"${csrf}"}`, 'application/json'],
    ['/-/logout', `_csrf=${csrf}&pad=${'p'.repeat(70 * 1024)}`],
  ];
  for (const [p, body, type] of forms) {
    const res = await post(p, body, type);
    t.ok(res.status < 500, `POST ${p}: ${res.status}`);
  }
  // The unreadable webhook form came back as the form, with the API's complaints next to the fields.
  const bad = await post('/demo/widgets/settings/hooks', `_csrf=${csrf}&url=http%3A%2F%2Fuser%3Apw%40127.0.0.1%2F&mode=all`);
  t.equal(bad.status, 422);
  t.match(await bad.text(), /id="url-error"/);
  t.notOk(
    w.logs.some((l) => /"level":50/.test(l)),
    'nothing logged as an error',
  );
  const cloneUrl = await fetch(`${w.url}/demo/widgets.git`, { redirect: 'manual' });
  t.equal(cloneUrl.headers.get('location'), '/demo/widgets', 'a clone URL opened in a browser leads to the repository');
});

t.test('the repository page lists open issues from the issues API', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  const made = await w.api('POST', '/api/v1/repos/demo/widgets/issues', { body: { title: 'Frames <b>rattle</b>' } });
  t.equal(made.status, 201);
  await w.api('POST', '/api/v1/repos/demo/widgets/issues', { body: { title: 'Closed one' } });
  await w.api('PATCH', '/api/v1/repos/demo/widgets/issues/2', { body: { state: 'closed' } });
  const { cookie } = await signInByFetch(w);
  const page = await (await fetch(`${w.url}/demo/widgets`, { headers: { cookie } })).text();
  t.match(page, 'Open issues');
  t.match(page, '#1</span> <a href="/demo/widgets/issues/1">Frames &lt;b&gt;rattle&lt;/b&gt;</a>', 'escaped title, linking to the issue');
  t.notMatch(page, 'Closed one', 'open issues only');
  const anonymous = await (await fetch(`${w.url}/demo/widgets`)).text();
  t.notMatch(anonymous, 'Open issues', 'signed out: the API needs a token, so the section is left out');
});
