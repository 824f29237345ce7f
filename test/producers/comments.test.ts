import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { common, eventsOf, isError } from './helpers.ts';

t.test('comments: create, list, edit and delete on an issue, each with its event', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  await w.api('POST', '/api/v1/repos/acme/app/issues', { token: dev.token, body: { title: 'Crash' } });

  const made = await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { token: dev.token, body: { body: 'Seen it too' } });
  t.equal(made.status, 201);
  t.match(made.body, { body: 'Seen it too', user: 'dev' });
  t.equal(made.headers.get('location'), `/api/v1/repos/acme/app/comments/${made.body.id}`);
  const list = await w.api('GET', '/api/v1/repos/acme/app/issues/1/comments', { token: dev.token });
  t.same(
    list.body.map((c: any) => c.body),
    ['Seen it too'],
  );

  const edited = await w.api('PATCH', `/api/v1/repos/acme/app/comments/${made.body.id}`, { token: w.adminToken, body: { body: 'Seen it twice' } });
  t.equal(edited.status, 200);
  t.equal(edited.body.body, 'Seen it twice');
  t.equal((await w.api('DELETE', `/api/v1/repos/acme/app/comments/${made.body.id}`, { token: dev.token })).status, 204);
  t.same((await w.api('GET', '/api/v1/repos/acme/app/issues/1/comments', { token: dev.token })).body, []);
  isError(t, await w.api('DELETE', `/api/v1/repos/acme/app/comments/${made.body.id}`, { token: dev.token }), 404, 'not_found');

  const events = (await eventsOf(w, repo)).filter((e) => e.type === 'comment');
  t.same(
    events.map((e) => e.action),
    ['created', 'edited', 'deleted'],
  );
  const comment = (body: string) => ({ id: made.body.id, body, user: 'dev', created_at: made.body.created_at });
  const issue = { number: 1, title: 'Crash', state: 'open' };
  t.same(events[0].payload, { event: 'comment', action: 'created', comment: comment('Seen it too'), issue, ...common(w, repo, 'dev') });
  t.same(events[1].payload, { event: 'comment', action: 'edited', comment: comment('Seen it twice'), issue, ...common(w, repo, 'admin') });
  t.same(events[2].payload, { event: 'comment', action: 'deleted', comment: comment('Seen it twice'), issue, ...common(w, repo, 'dev') });
});

t.test('comments: bad input, unknown numbers and ids, and permissions', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app', 'public');
  await buildRepo(w, 'other', 'app');
  const outsider = await buildUser(w, 'outsider');
  await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'Crash' } });
  const c = await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { body: { body: 'x' } });

  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { body: {} }), 422, 'validation_failed', ['/body']);
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { body: { body: 1, user: 'x' } }), 422, 'validation_failed', ['/body', '/user']);
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues/9/comments', { body: { body: 'x' } }), 404, 'not_found');
  isError(t, await w.api('GET', '/api/v1/repos/acme/app/issues/9/comments'), 404, 'not_found');
  isError(t, await w.api('PATCH', '/api/v1/repos/acme/app/comments/999', { body: { body: 'x' } }), 404, 'not_found');
  isError(t, await w.api('PATCH', '/api/v1/repos/acme/app/comments/99999999999', { body: { body: 'x' } }), 404, 'not_found');
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { body: { body: 'nul \u0000' } }), 422, 'validation_failed', ['/body']);
  isError(t, await w.api('PATCH', `/api/v1/repos/acme/app/comments/${c.body.id}`, { body: { text: 'x' } }), 422, 'validation_failed', ['/body', '/text']);
  // A comment id of another repository is not found through this one.
  isError(t, await w.api('PATCH', `/api/v1/repos/other/app/comments/${c.body.id}`, { body: { body: 'y' } }), 404, 'not_found');
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { token: null, body: { body: 'x' } }), 401, 'unauthorized');
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { token: outsider.token, body: { body: 'x' } }), 403, 'forbidden');
  isError(t, await w.api('DELETE', `/api/v1/repos/acme/app/comments/${c.body.id}`, { token: outsider.token }), 403, 'forbidden');
  t.equal((await w.api('GET', '/api/v1/repos/acme/app/issues/1/comments', { token: outsider.token })).status, 200, 'public: readable');
  t.same(
    (await eventsOf(w, repo)).map((e) => `${e.type} ${e.action}`),
    ['issue opened', 'comment created'],
  );
});
