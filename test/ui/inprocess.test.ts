import t from 'tap';
import { buildRepo, buildUser, type TestWharf } from '../helpers/wharf.ts';
import { startUiWharf } from './browser.ts';

/** A browser made of fetch: keeps its cookies, reads each page's CSRF token, posts forms. */
function browser(w: TestWharf) {
  const cookies = new Map<string, string>();
  let csrf = '';
  const send = async (method: string, path: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), accept: 'text/html' };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`${w.url}${path}`, { method, headers, redirect: 'manual', body: form && new URLSearchParams({ _csrf: csrf, ...form }).toString() });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const text = await res.text();
    csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf;
    return { status: res.status, text, location: res.headers.get('location') };
  };
  return {
    get: (path: string) => send('GET', path),
    post: (path: string, form: Record<string, string>) => send('POST', path, form),
    async signIn(token: string) {
      await send('GET', '/-/login');
      return send('POST', '/-/login', { token, next: '/' });
    },
  };
}

/** The paths of every request the server logged. */
function loggedPaths(w: TestWharf): string[] {
  return w.logs
    .flatMap((line) => line.split('\n'))
    .filter((l) => l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l).path);
}

t.test('pages and forms call the domain in process: the server sees no REST request while a signed-in user works', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'widgets');
  const b = browser(w);
  t.equal((await b.signIn(w.adminToken)).status, 303);
  for (const path of ['/', '/demo', '/demo/widgets', '/demo/widgets/settings/hooks', '/demo/widgets/settings/hooks/new', '/-/import'])
    t.equal((await b.get(path)).status, 200, `GET ${path}`);
  const added = await b.post('/demo/widgets/settings/hooks', { url: 'http://127.0.0.1:9/hook', secret: 's3cret', mode: 'push', active: 'on' });
  t.equal(added.status, 303, 'a webhook added');
  t.equal((await b.get(added.location!)).status, 200, 'its page');
  t.equal((await b.post(`${added.location}/ping`, {})).status, 303, 'pinged');
  const bad = await b.post('/demo/widgets/settings/hooks', { url: 'http://user:pw@127.0.0.1/', mode: 'all' });
  t.equal(bad.status, 422, 'a refused URL comes back on the form');
  t.match(bad.text, /id="url-error"/);
  const paths = loggedPaths(w);
  t.ok(paths.includes('/demo/widgets/settings/hooks'), 'the request log shows the pages');
  t.same(
    paths.filter((p) => p.startsWith('/api/')),
    [],
    'and no REST request',
  );
});

t.test('web pages are not counted against the API rate limit; sign-in attempts still are', async (t) => {
  const w = await startUiWharf(t, { env: { RATE_LIMIT: '5/1h,100/1h' } });
  await buildRepo(w, 'demo', 'widgets');
  const b = browser(w);
  t.equal((await b.signIn(w.adminToken)).status, 303, "sign-in: one attempt of the browser's address");
  for (let i = 0; i < 8; i++) t.equal((await b.get(i % 2 ? '/demo' : '/demo/widgets')).status, 200, `page ${i + 1}`);
  const api = await w.api('GET', '/api/v1/user');
  t.equal(api.status, 200, 'the API still has its quota');
  t.equal(api.headers.get('x-ratelimit-used'), '1', "this request only: the sign-in counted against the browser's address");
});

t.test("the pages apply the API's access rules to the signed-in user", async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'open', 'public');
  await buildRepo(w, 'acme', 'staff', 'internal');
  await buildRepo(w, 'acme', 'vault', 'private');
  const bob = await buildUser(w, 'bob');
  const b = browser(w);
  t.equal((await b.signIn(bob.token)).status, 303);
  const org = await b.get('/acme');
  t.match(org.text, 'acme/open');
  t.match(org.text, 'acme/staff', 'a signed-in user sees internal repositories');
  t.notMatch(org.text, 'acme/vault');
  t.equal((await b.get('/acme/staff')).status, 200);
  for (const path of ['/acme/vault', '/acme/vault/settings/hooks', '/acme/missing']) t.equal((await b.get(path)).status, 404, `${path}: not revealed`);
  const hooks = await b.get('/acme/open/settings/hooks');
  t.equal(hooks.status, 403, 'a repository they see but do not own: refused as the API refuses it');
  t.match(hooks.text, 'Only organization owners may do this');
  const added = await b.post('/acme/open/settings/hooks', { url: 'http://127.0.0.1:9/x', mode: 'push' });
  t.equal(added.status, 403, 'and so is adding a webhook');
  t.equal((await w.running.services.db('webhooks').count('* as n'))[0].n, 0, 'nothing was written');
  const importing = await b.post('/-/import', { source: 'git', url: 'https://example.com/x.git', org: 'acme', name: 'x', visibility: 'private' });
  t.equal(importing.status, 422, 'an import into an organization they are not in');
  t.match(importing.text, 'Organization not found');
});
