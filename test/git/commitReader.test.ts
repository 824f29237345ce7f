import t from 'tap';
import path from 'node:path';
import { openCommitReader, readCommits } from '../../src/git/commitReader.ts';
import { gitClient } from '../helpers/git.ts';

t.test('one cat-file serves a series of reads: commits, peeled tags, missing and non-commit objects, bodies larger than a pipe chunk', async (t) => {
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  const first = await g.commit(work, 'first');
  const long = 'x'.repeat(300_000);
  await g.ok(['commit', '-q', '--allow-empty', '-F', '-'], { cwd: work, input: `second\n\n${long}\n` });
  const second = (await g.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
  await g.ok(['tag', '-a', '-m', 'release', 'v1', first], { cwd: work });
  const tag = (await g.ok(['rev-parse', 'v1'], { cwd: work })).trim();
  const tree = (await g.ok(['rev-parse', `${first}^{tree}`], { cwd: work })).trim();
  const gitDir = path.join(work, '.git');

  const reader = openCommitReader(gitDir);
  t.teardown(() => reader.close());
  const one = await reader.read([first, second]);
  t.equal(one.get(first)?.message, 'first');
  t.equal(one.get(first)?.author.email, 'ada@example.com');
  t.equal(one.get(second)?.message, `second\n\n${long}`, 'a commit spanning many pipe chunks is read whole');
  // Calls made at once queue and are answered in order, each with its own answers.
  const [two, three, four] = await Promise.all([reader.read([`${tag}^{commit}`, tree]), reader.read(['0'.repeat(40)]), reader.read([])]);
  t.equal(two.get(`${tag}^{commit}`)?.id, first, 'a tag peels to its commit');
  t.equal(two.get(tree), null, 'a tree is no commit');
  t.equal(three.get('0'.repeat(40)), null, 'a missing object is null');
  t.equal(four.size, 0);
  t.same([...(await readCommits(gitDir, [second, first])).keys()], [second, first], 'the one-shot read answers in the order asked');

  reader.close();
  await t.rejects(reader.read([first]), /closed/, 'a closed reader refuses further reads');
});
