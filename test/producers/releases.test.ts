import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { bareDir, commitFiles, common, eventsOf, gitIn, isError, setBranch } from './helpers.ts';

t.test('releases: creating the missing tag raises a push for it, then release published', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  const second = await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'second');
  await setBranch(dir, 'main', second);
  await setBranch(dir, 'old', root);

  const made = await w.api('POST', '/api/v1/repos/acme/app/releases', { token: dev.token, body: { tag_name: 'v1.0.0', name: 'One', body: 'Notes' } });
  t.equal(made.status, 201);
  t.match(made.body, { tag_name: 'v1.0.0', name: 'One', body: 'Notes', draft: false, prerelease: false, target_commitish: 'main', author: 'dev' });
  t.match(made.body.published_at, /^\d{4}-/);
  t.equal(await gitIn(dir, ['rev-parse', 'refs/tags/v1.0.0']), second, 'tag created at the default branch');
  t.same((await w.api('GET', `/api/v1/repos/acme/app/releases/${made.body.id}`, { token: dev.token })).body, made.body);

  const events = await eventsOf(w, repo);
  t.same(
    events.map((e) => [e.type, e.action]),
    [
      ['push', null],
      ['release', 'published'],
    ],
  );
  t.match(events[0].payload, { event: 'push', ref: 'refs/tags/v1.0.0', before: '0'.repeat(40), after: second, created: true, deleted: false });
  t.equal(events[0].ref, 'refs/tags/v1.0.0');
  t.same(events[1].payload, {
    event: 'release',
    action: 'published',
    release: {
      id: made.body.id,
      tag_name: 'v1.0.0',
      name: 'One',
      body: 'Notes',
      draft: false,
      prerelease: false,
      target_commitish: 'main',
      published_at: made.body.published_at,
      author: 'dev',
    },
    ...common(w, repo, 'dev'),
  });

  // At a branch, and at a sha.
  await w.api('POST', '/api/v1/repos/acme/app/releases', { token: dev.token, body: { tag_name: 'v0.9', target_commitish: 'old', prerelease: true } });
  t.equal(await gitIn(dir, ['rev-parse', 'refs/tags/v0.9']), root);
  await w.api('POST', '/api/v1/repos/acme/app/releases', { token: dev.token, body: { tag_name: 'v0.8', target_commitish: root } });
  t.equal(await gitIn(dir, ['rev-parse', 'refs/tags/v0.8']), root);
  // An existing tag is used as it is: no push event, only the release.
  await gitIn(dir, ['update-ref', 'refs/tags/v0.1', root]);
  const existing = await w.api('POST', '/api/v1/repos/acme/app/releases', { token: dev.token, body: { tag_name: 'v0.1' } });
  t.equal(existing.status, 201);
  t.equal(await gitIn(dir, ['rev-parse', 'refs/tags/v0.1']), root, 'existing tag not moved');
  // A draft creates no tag and raises nothing, as on GitHub.
  const draft = await w.api('POST', '/api/v1/repos/acme/app/releases', { token: dev.token, body: { tag_name: 'v2.0', draft: true } });
  t.match(draft.body, { draft: true, published_at: null });
  await t.rejects(gitIn(dir, ['rev-parse', '--verify', 'refs/tags/v2.0']));
  t.same(
    (await eventsOf(w, repo)).slice(2).map((e) => `${e.type} ${e.ref ?? e.action}`),
    ['push refs/tags/v0.9', 'release published', 'push refs/tags/v0.8', 'release published', 'release published'],
  );
});

t.test('releases: bad input, duplicates and permissions', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  const outsider = await buildUser(w, 'outsider');
  const path = '/api/v1/repos/acme/app/releases';
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1' } }), 422, 'validation_failed', ['/target_commitish']);
  const dir = bareDir(w, repo);
  await setBranch(dir, 'main', await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root'));
  isError(t, await w.api('POST', path, { body: {} }), 422, 'validation_failed', ['/tag_name']);
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1', draft: 'yes', extra: 1 } }), 422, 'validation_failed', ['/draft', '/extra']);
  isError(t, await w.api('POST', path, { body: { tag_name: 'bad..name' } }), 422, 'validation_failed', ['/tag_name']);
  isError(t, await w.api('POST', path, { body: { tag_name: '-v1' } }), 422, 'validation_failed', ['/tag_name']);
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1', target_commitish: 'nope' } }), 422, 'validation_failed', ['/target_commitish']);
  // Revision syntax is not a branch name.
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1', target_commitish: 'main~0' } }), 422, 'validation_failed', ['/target_commitish']);
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1', target_commitish: 'main^{/root}' } }), 422, 'validation_failed', ['/target_commitish']);
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1', target_commitish: 'c'.repeat(40) } }), 422, 'validation_failed', ['/target_commitish']);
  isError(t, await w.api('POST', path, { token: outsider.token, body: { tag_name: 'v1' } }), 404, 'not_found');
  isError(t, await w.api('POST', path, { token: null, body: { tag_name: 'v1' } }), 401, 'unauthorized');
  t.equal((await w.api('POST', path, { body: { tag_name: 'v1' } })).status, 201);
  isError(t, await w.api('POST', path, { body: { tag_name: 'v1' } }), 409, 'conflict');
  isError(t, await w.api('GET', `${path}/999`), 404, 'not_found');
  t.same(
    (await eventsOf(w, repo)).map((e) => e.type),
    ['push', 'release'],
  );
});
