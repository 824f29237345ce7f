import fc from 'fast-check';
import t from 'tap';
import { check, fuzzWharf, junkSegment, junkText, snapshot, tally } from './harness.ts';
import type { TestWharf } from '../helpers/wharf.ts';

/** Signs in through the login form as a browser would; returns the session cookie and the page's CSRF token. */
async function signIn(w: TestWharf): Promise<{ cookie: string; csrf: string }> {
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

// Every form of the web UI; `:x` are path parameters.
const FORMS = [
  '/-/login',
  '/-/logout',
  '/-/import',
  '/-/import/:id/cancel',
  '/:org/:repo/settings/hooks',
  '/:org/:repo/settings/hooks/:id',
  '/:org/:repo/settings/hooks/:id/delete',
  '/:org/:repo/settings/hooks/:id/ping',
  '/:org/:repo/settings/hooks/:id/deliveries/:id/redeliver',
];
const FIELDS = [
  'url',
  'secret',
  'mode',
  'events',
  'active',
  'content_type',
  'source',
  'org',
  'name',
  'visibility',
  'token',
  'next',
  'username',
  'password',
  'mirror',
];

t.test('web UI forms, fuzzed: with and without CSRF, junk fields: never a 5xx, no write when refused or without CSRF', async (t) => {
  const { w } = await fuzzWharf(t);
  const { cookie, csrf } = await signIn(w);
  const seen = tally(t, 'ui forms');
  const formValue = fc.oneof(fc.constantFrom('http://127.0.0.1:9/h', 'demo', 'app', 'all', 'push', 'on', 'git', 'private', '/'), junkText);
  const request = fc.record({
    form: fc.constantFrom(...FORMS),
    org: junkSegment('demo'),
    repo: junkSegment('app', 'pub'),
    id: junkSegment('1', '99', '2147483648'),
    csrf: fc.constantFrom('valid', 'valid', 'missing', 'stale'),
    signedIn: fc.boolean(),
    fields: fc.array(fc.tuple(fc.constantFrom(...FIELDS), formValue), { maxLength: 6 }),
  });
  await check(
    request,
    async (r) => {
      const before = await snapshot(w);
      const path = r.form.replace(':org', r.org).replace(':repo', r.repo).replace(/:id/g, r.id);
      const body = new URLSearchParams(r.fields.map(([k, v]) => [k, v.replace(/[\ud800-\udfff]/g, '\u0000')]));
      if (r.csrf === 'valid') body.set('_csrf', csrf);
      if (r.csrf === 'stale') body.set('_csrf', 'x'.repeat(43));
      const res = await fetch(w.url + path, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...(r.signedIn ? { cookie } : {}) },
        body: body.toString(),
      });
      const text = await res.text();
      seen.count(res.status);
      const what = `POST ${path} (${r.csrf} CSRF, ${r.signedIn ? 'signed in' : 'signed out'}): ${res.status} ${text.slice(0, 200)}`;
      if (res.status >= 500) throw new Error(`5xx: ${what}`);
      const changed = (await snapshot(w)) !== before;
      if (changed && (res.status >= 400 || r.csrf !== 'valid')) throw new Error(`a refused form changed the database: ${what}`);
    },
    100,
  );
  t.pass('no 5xx; refused forms and forms without a valid CSRF token wrote nothing');
});
