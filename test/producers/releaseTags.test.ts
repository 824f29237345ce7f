import t from 'tap';
import { buildRepo, startWharf } from '../helpers/wharf.ts';
import { bareDir, commitFiles, eventsOf, gitIn, isError, setBranch } from './helpers.ts';

t.test('a release tag_name that is a full ref or a name git refuses is a 422; nothing is created', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  const dir = bareDir(w, repo);
  await setBranch(dir, 'main', await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root'));
  const bad = ['refs/heads/main', 'refs/tags/v1', 'refs/x', 'a..b', 'v1.lock', 'v1/', 'v1~1', 'v1^', 'a:b', 'x/.y', 'v1@{1}', 'a\\b'];
  for (const tag_name of bad) {
    for (const draft of [false, true]) {
      const answer = await w.api('POST', '/api/v1/repos/acme/app/releases', { body: { tag_name, draft } });
      isError(t, answer, 422, 'validation_failed', ['/tag_name']);
    }
  }
  t.equal(await gitIn(dir, ['for-each-ref', '--format=%(refname)', 'refs/tags/']), '', 'no tag was created');
  t.same(await eventsOf(w, repo), [], 'no event was raised');
  const fine = await w.api('POST', '/api/v1/repos/acme/app/releases', { body: { tag_name: 'release/v1.0' } });
  t.equal(fine.status, 201, 'a hierarchical tag name is still fine');
});
