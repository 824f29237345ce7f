import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { eventsOf, isError } from './helpers.ts';

t.test('a comment is edited or deleted by its author, an org owner or a site admin; another member gets 403', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const alice = await buildUser(w, 'alice', { org: 'acme', role: 'member' });
  const bob = await buildUser(w, 'bob', { org: 'acme', role: 'member' });
  const owner = await buildUser(w, 'olga', { org: 'acme', role: 'owner' });
  await w.api('POST', '/api/v1/repos/acme/app/issues', { token: alice.token, body: { title: 'Crash' } });
  const comment = async (text: string) =>
    (await w.api('POST', '/api/v1/repos/acme/app/issues/1/comments', { token: alice.token, body: { body: text } })).body.id;
  const path = (id: number) => `/api/v1/repos/acme/app/comments/${id}`;

  const first = await comment('mine');
  isError(t, await w.api('PATCH', path(first), { token: bob.token, body: { body: 'bob was here' } }), 403, 'forbidden');
  isError(t, await w.api('DELETE', path(first), { token: bob.token }), 403, 'forbidden');
  t.same(
    (await w.api('GET', '/api/v1/repos/acme/app/issues/1/comments', { token: bob.token })).body.map((c: any) => c.body),
    ['mine'],
    'unchanged',
  );

  t.equal((await w.api('PATCH', path(first), { token: alice.token, body: { body: 'mine, edited' } })).status, 200, 'the author edits');
  t.equal((await w.api('PATCH', path(first), { token: owner.token, body: { body: 'moderated' } })).status, 200, 'an org owner edits');
  t.equal((await w.api('PATCH', path(first), { token: w.adminToken, body: { body: 'by admin' } })).status, 200, 'a site admin edits');
  t.equal((await w.api('DELETE', path(first), { token: owner.token })).status, 204, 'an org owner deletes');
  t.equal((await w.api('DELETE', path(await comment('two')), { token: alice.token })).status, 204, 'the author deletes');
  t.equal((await w.api('DELETE', path(await comment('three')), { token: w.adminToken })).status, 204, 'a site admin deletes');

  const actions = (await eventsOf(w, repo)).filter((e) => e.type === 'comment').map((e) => `${e.action} by ${e.payload.sender?.login}`);
  t.same(
    actions,
    [
      'created by alice',
      'edited by alice',
      'edited by olga',
      'edited by admin',
      'deleted by olga',
      'created by alice',
      'deleted by alice',
      'created by alice',
      'deleted by admin',
    ],
    'no event for the refused changes',
  );
});
