import t from 'tap';
import { buildUser, startWharf } from '../helpers/wharf.ts';

t.test('members API: list for members, add, change role and remove for owners, never without an owner', async (t) => {
  const w = await startWharf(t);
  t.equal((await w.api('POST', '/api/v1/orgs', { body: { name: 'acme' } })).status, 201, 'the admin creates acme and owns it');
  const ann = await buildUser(w, 'ann');
  const bob = await buildUser(w, 'bob');
  const stranger = await buildUser(w, 'sam', { org: 'other', role: 'owner' });

  t.equal((await w.api('POST', '/api/v1/orgs/acme/members', { body: { login: 'ann', role: 'owner' } })).status, 200);
  t.equal((await w.api('POST', '/api/v1/orgs/acme/members', { body: { login: 'bob' } })).status, 200);
  const list = await w.api('GET', '/api/v1/orgs/acme/members', { token: bob.token });
  t.equal(list.status, 200, 'a member sees the members');
  t.same(list.body, [
    { org: 'acme', login: 'admin', role: 'owner' },
    { org: 'acme', login: 'ann', role: 'owner' },
    { org: 'acme', login: 'bob', role: 'member' },
  ]);
  t.equal((await w.api('GET', '/api/v1/orgs/acme/members', { token: stranger.token })).status, 404, 'another organization’s owner: 404');
  t.equal((await w.api('GET', '/api/v1/orgs/acme/members', { token: null })).status, 401);

  // A member may not change anything.
  t.equal((await w.api('PATCH', '/api/v1/orgs/acme/members/bob', { token: bob.token, body: { role: 'owner' } })).status, 403);
  t.equal((await w.api('DELETE', '/api/v1/orgs/acme/members/ann', { token: bob.token })).status, 403);
  t.equal((await w.api('DELETE', '/api/v1/orgs/acme/members/ann', { token: stranger.token })).status, 404);

  const promoted = await w.api('PATCH', '/api/v1/orgs/acme/members/bob', { token: ann.token, body: { role: 'owner' } });
  t.equal(promoted.status, 200);
  t.same(promoted.body, { org: 'acme', login: 'bob', role: 'owner' });
  t.equal((await w.api('PATCH', '/api/v1/orgs/acme/members/bob', { token: ann.token, body: { role: 'king' } })).status, 422);
  t.equal((await w.api('PATCH', '/api/v1/orgs/acme/members/sam', { token: ann.token, body: { role: 'owner' } })).status, 404, 'not a member');
  t.equal((await w.api('PATCH', '/api/v1/orgs/acme/members/nobody', { token: ann.token, body: { role: 'owner' } })).status, 404, 'no such user');

  // Down to one owner, who can then be neither demoted nor removed, by any route.
  t.equal((await w.api('DELETE', '/api/v1/orgs/acme/members/admin', { token: ann.token })).status, 204);
  t.equal((await w.api('PATCH', '/api/v1/orgs/acme/members/ann', { token: bob.token, body: { role: 'member' } })).status, 200);
  const demote = await w.api('PATCH', '/api/v1/orgs/acme/members/bob', { token: bob.token, body: { role: 'member' } });
  t.equal(demote.status, 409);
  t.equal(demote.body.error.code, 'conflict');
  t.match(demote.body.error.message, /at least one owner/);
  t.equal((await w.api('POST', '/api/v1/orgs/acme/members', { token: bob.token, body: { login: 'bob', role: 'member' } })).status, 409, 'nor through POST');
  t.equal((await w.api('DELETE', '/api/v1/orgs/acme/members/bob', { token: bob.token })).status, 409);
  t.same((await w.api('GET', '/api/v1/orgs/acme/members', { token: bob.token })).body, [
    { org: 'acme', login: 'bob', role: 'owner' },
    { org: 'acme', login: 'ann', role: 'member' },
  ]);

  t.equal((await w.api('DELETE', '/api/v1/orgs/acme/members/ann', { token: bob.token })).status, 204);
  t.equal((await w.api('DELETE', '/api/v1/orgs/acme/members/ann', { token: bob.token })).status, 404, 'removed already');
  t.equal((await w.api('GET', '/api/v1/orgs/acme/members', { token: ann.token })).status, 404, 'a removed member no longer sees the organization’s members');
});

t.test('two owners stepping down at once leave one owner', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'duo', role: 'owner' });
  const bob = await buildUser(w, 'bob', { org: 'duo', role: 'owner' });
  const answers = await Promise.all([
    w.api('PATCH', '/api/v1/orgs/duo/members/ann', { token: ann.token, body: { role: 'member' } }),
    w.api('PATCH', '/api/v1/orgs/duo/members/bob', { token: bob.token, body: { role: 'member' } }),
  ]);
  t.same(answers.map((a) => a.status).sort(), [200, 409], 'one steps down, the other is refused');
  const owners = (await w.api('GET', '/api/v1/orgs/duo/members')).body.filter((m: { role: string }) => m.role === 'owner');
  t.equal(owners.length, 1);
});
