import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';

t.test('bad input is a 422 naming the field; the host policy refuses a disallowed URL', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const post = (body: unknown) => w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token, body });
  const cases: [unknown, string][] = [
    [{ url: 'http://127.0.0.1:9/x.git' }, '/url'],
    [{ url: 'http://[::ffff:127.0.0.1]/x.git' }, '/url'],
    [{ url: 'http://169.254.169.254/x.git' }, '/url'],
    [{ url: 'http://localhost/x.git' }, '/url'],
    [{ url: 'git://example.com/x.git' }, '/url'],
    [{ url: 'file:///etc/passwd' }, '/url'],
    [{ url: 'ext::sh -c touch% /tmp/x' }, '/url'],
    [{ url: '-uhttp://example.com' }, '/url'],
    [{ url: 'https://example.com/x.git', interval: '30s' }, '/interval'],
    [{ url: 'https://example.com/x.git', interval: 'soon' }, '/interval'],
    [{ url: 'https://example.com/x.git', interval: '400d' }, '/interval'],
    [{ url: 'https://example.com/x.git', sync_on_push: 'yes' }, '/sync_on_push'],
    [{ url: 'https://example.com/x.git', extra: 1 }, ''],
    [{ url: 123 }, '/url'],
    [{ url: 'https://exa\u0000mple.com/x.git' }, '/url'],
    [{ url: 'http://[::1/x.git' }, '/url'],
    [{ url: `https://example.com/${'a'.repeat(3000)}` }, '/url'],
    [{ url: 'https://example.com/x.git', interval: '\u0661h' }, '/interval'],
    [{ url: 'https://example.com/x.git', interval: '0.5m' }, '/interval'],
    [{ url: 'https://example.com/x.git', interval: 60 }, '/interval'],
    [{ url: 'https://example.com/x.git', username: 'a\u0000b' }, '/username'],
    [{ url: 'https://example.com/x.git', password: 'p'.repeat(5000) }, '/password'],
    [{}, ''],
  ];
  for (const [body, pointer] of cases) {
    const answer = await post(body);
    t.equal(answer.status, 422, `${JSON.stringify(body)}: ${answer.text}`);
    t.equal(answer.body.error.code, 'validation_failed');
    if (pointer)
      t.ok(
        answer.body.error.details.some((d: any) => d.path === pointer),
        `${JSON.stringify(body)} names ${pointer}`,
      );
  }
  t.equal((await w.api('GET', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token })).body.length, 0, 'nothing was created');
});

t.test('list, get, delete, the cap, one URL once, and who may see them', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const max = await buildUser(w, 'max', { org: 'acme', role: 'member' });
  const eve = await buildUser(w, 'eve', { org: 'other', role: 'owner' });
  await buildRepo(w, 'other', 'theirs');
  const base = '/api/v1/repos/acme/proj/push-mirrors';
  // Nothing listens on port 9: syncs fail, which is all this test needs of them.
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) {
    const answer = await w.api('POST', base, { token: ann.token, body: { url: `http://127.0.0.1:9/m${i}.git`, password: `pw-${i}` } });
    t.equal(answer.status, 201, answer.text);
    ids.push(answer.body.id);
  }
  const eleventh = await w.api('POST', base, { token: ann.token, body: { url: 'http://127.0.0.1:9/m10.git' } });
  t.equal(eleventh.status, 422, 'at most 10 per repository');
  await w.api('DELETE', `${base}/${ids[9]}`, { token: ann.token });
  const twice = await w.api('POST', base, { token: ann.token, body: { url: 'http://127.0.0.1:9/m0.git' } });
  t.equal(twice.status, 422, 'the same URL twice');

  const list = await w.api('GET', base, { token: ann.token });
  t.equal(list.status, 200);
  t.same(
    list.body.map((m: any) => m.id),
    ids.slice(0, 9),
  );
  for (const m of list.body) {
    t.same(Object.keys(m).sort(), [
      'created_at',
      'has_credentials',
      'id',
      'interval',
      'last_error',
      'last_sync_at',
      'last_sync_status',
      'next_sync_at',
      'sync_on_push',
      'url',
    ]);
    t.notOk(JSON.stringify(m).includes('pw-'), 'no credentials');
  }
  const one = await w.api('GET', `${base}/${ids[0]}`, { token: ann.token });
  t.equal(one.status, 200);
  t.equal(one.body.url, 'http://127.0.0.1:9/m0.git');

  t.equal((await w.api('DELETE', `${base}/${ids[0]}`, { token: ann.token })).status, 204);
  t.equal((await w.api('DELETE', `${base}/${ids[0]}`, { token: ann.token })).status, 404, 'gone');
  t.equal((await w.api('GET', `${base}/${ids[0]}`, { token: ann.token })).status, 404);
  t.equal((await w.api('GET', base, { token: ann.token })).body.length, 8);

  // Another tenant: the repository does not exist for them.
  for (const [method, path] of [
    ['GET', base],
    ['POST', base],
    ['GET', `${base}/${ids[1]}`],
    ['DELETE', `${base}/${ids[1]}`],
    ['POST', `${base}/${ids[1]}/sync`],
  ]) {
    const answer = await w.api(method, path, { token: eve.token, body: method === 'POST' ? { url: 'http://127.0.0.1:9/e.git' } : undefined });
    t.equal(answer.status, 404, `${method} ${path} by another tenant`);
  }
  // A mirror of another repository is not found under this one.
  const theirs = await w.api('POST', '/api/v1/repos/other/theirs/push-mirrors', { token: eve.token, body: { url: 'http://127.0.0.1:9/t.git' } });
  t.equal(theirs.status, 201);
  t.equal((await w.api('GET', `${base}/${theirs.body.id}`, { token: ann.token })).status, 404);
  t.equal((await w.api('DELETE', `${base}/${theirs.body.id}`, { token: ann.token })).status, 404);
  // A member may push but not manage mirrors; no token is a 401.
  t.equal((await w.api('GET', base, { token: max.token })).status, 403);
  t.equal((await w.api('GET', base, { token: null })).status, 401);
  // Deleting the repository deletes its mirrors.
  await w.running.services.db('repositories').where('id', repo.id).delete();
  t.equal(Number((await w.running.services.db('push_mirrors').count({ n: '*' }))[0].n), 1, "only the other repository's mirror is left");
});
