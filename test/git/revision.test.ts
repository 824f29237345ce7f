import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { resolveRevision, safeSegments, splitRevisionPath } from '../../src/git/revision.ts';

t.test('a path after a branch, a tag or a commit id is split at the longest name', async (t) => {
  const dir = t.testdir();
  const work = path.join(dir, 'w');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@x' };
  const run = (...args: string[]) => execFileSync('git', args, { cwd: work, env }).toString().trim();
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  run('commit', '-q', '--allow-empty', '-m', 'one');
  const first = run('rev-parse', 'HEAD');
  run('commit', '-q', '--allow-empty', '-m', 'two');
  const second = run('rev-parse', 'HEAD');
  run('branch', 'feature/x', first);
  run('tag', '-a', 'v1', '-m', 'annotated', first);
  run('tag', 'main', first); // a tag named like a branch: the branch wins

  const split = async (p: string) => splitRevisionPath(work, safeSegments(p) ?? ['..']);
  t.same(await split('main/src/a.c'), { revision: { name: 'main', kind: 'branch', commit: second }, path: ['src', 'a.c'] });
  t.same(await split('feature/x/docs'), { revision: { name: 'feature/x', kind: 'branch', commit: first }, path: ['docs'] });
  t.same(await split('v1'), { revision: { name: 'v1', kind: 'tag', commit: first }, path: [] }, 'an annotated tag is peeled to its commit');
  t.same(await split(`${first.slice(0, 7)}/README`), { revision: { name: first.slice(0, 7), kind: 'commit', commit: first }, path: ['README'] });
  t.equal(await split('nope/x'), null);
  t.equal(await split('feature'), null, 'a name that is only the start of a branch names nothing');
  t.equal((await resolveRevision(work, 'feature/x'))?.commit, first);
  t.equal(await resolveRevision(work, 'main/extra'), null, 'a whole name must be the revision');
  t.equal(await resolveRevision(work, second.slice(0, 3)), null, 'under four hex digits is not an id');
});

t.test('segments that could escape or be read as an option are refused', async (t) => {
  for (const bad of ['..', 'a/../b', './a', 'a//b', '-n', 'a/--output=x', 'a\0b', 'a\\b', 'a\nb', '/a']) t.equal(safeSegments(bad), null, JSON.stringify(bad));
  t.same(safeSegments('a/b.c/d-e'), ['a', 'b.c', 'd-e']);
  t.same(safeSegments(''), []);
});
