import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { gitClient } from '../helpers/git.ts';
import { changedFiles } from '../../src/git/diff.ts';
import { readPatch } from '../../src/git/patch.ts';
import { commitDetails, listCommits, listRefNames, mergeBase, refEntries } from '../../src/git/history.ts';

t.test('changed files and the patch: odd paths, a rename, a mode change, content that looks like a header', async (t) => {
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  const first = await g.commit(work, 'First', {
    'moved.txt': 'one\ntwo\nthree\nfour\nfive\n',
    'script.sh': 'echo hi\n',
    'dashes.txt': '-- a signature\nkept\n',
  });
  await g.ok(['mv', 'moved.txt', 'now here.txt'], { cwd: work });
  fs.chmodSync(path.join(work, 'script.sh'), 0o755);
  const second = await g.commit(work, 'Second\n\nWith a body.', {
    'a b\tc\nd ü.txt': 'odd\n',
    'dashes.txt': 'kept\n+++ looks like a header',
  });

  const listed = await changedFiles(work, { base: first, head: second });
  t.equal(listed.total, 4);
  t.same(
    listed.files.map((f) => [f.status, f.oldPath ?? null, f.path, f.added, f.removed]),
    [
      ['A', null, 'a b\tc\nd ü.txt', 1, 0],
      ['M', null, 'dashes.txt', 1, 1],
      ['R', 'moved.txt', 'now here.txt', 0, 0],
      ['M', null, 'script.sh', 0, 0],
    ],
    'paths exactly as committed, in the patch order, with their counts',
  );
  const patch = await readPatch(work, { base: first, head: second });
  t.ok(patch.complete);
  t.equal(patch.files.length, 4);
  t.same(
    patch.files[1].hunks[0].lines.map((l) => [l.kind, l.text, l.old ?? null, l.new ?? null]),
    [
      ['del', '-- a signature', 1, null],
      ['context', 'kept', 2, 1],
      ['add', '+++ looks like a header', null, 2],
      ['note', 'No newline at end of file', null, null],
    ],
    'content lines starting with --- or +++ are content; line numbers on both sides',
  );
  t.same(patch.files[2].hunks, [], 'a pure rename has no hunk');
  t.match(patch.files[2].notes.join(' '), 'similarity index 100%');
  t.same(patch.files[3].notes, ['old mode 100644', 'new mode 100755']);

  const limited = await changedFiles(work, { base: first, head: second }, 2);
  t.same([limited.total, limited.files.length, limited.files[1].added], [4, 2, 1], 'listed up to the limit, every file counted');
  const cut = await readPatch(work, { base: first, head: second }, { files: 1, lines: 100, bytes: 1 << 20 });
  t.same([cut.complete, cut.files.length], [false, 1], 'stopped at the file limit');
  const short = await readPatch(work, { base: first, head: second }, { files: 10, lines: 2, bytes: 1 << 20 });
  t.same([short.complete, short.files.length, short.files[1].hunks[0].lines.length], [false, 2, 1], 'stopped at the line limit');

  // A first commit diffs against nothing; base null means "against its first parent".
  const root = await changedFiles(work, { base: null, head: first });
  t.same(
    root.files.map((f) => f.status + f.path),
    ['Adashes.txt', 'Amoved.txt', 'Ascript.sh'],
  );
  t.equal((await changedFiles(work, { base: null, head: second })).total, 4);

  const details = await commitDetails(work, second);
  t.same([details.subject, details.body, details.parents], ['Second', 'With a body.', [first]]);
  t.same(
    (await listCommits(work, [second], { count: 5 })).map((c) => c.subject),
    ['Second', 'First'],
  );
  t.same(
    (await listCommits(work, [second], { count: 5, skip: 1 })).map((c) => c.subject),
    ['First'],
  );
  t.same(
    (await listCommits(work, [second], { count: 5, hidden: [first] })).map((c) => c.subject),
    ['Second'],
  );
  t.equal(await mergeBase(work, first, second), first);
  await g.ok(['tag', '-a', 'v1', '-m', 'annotated', first], { cwd: work });
  await g.ok(['tag', 'v1.5', second], { cwd: work });
  await g.ok(['tag', 'v10', second], { cwd: work });
  await g.ok(['tag', 'v2', second], { cwd: work });
  const names = await listRefNames(work, 'refs/tags/');
  t.same(names, ['refs/tags/v10', 'refs/tags/v2', 'refs/tags/v1.5', 'refs/tags/v1'], 'tags by version, highest first');
  t.same(
    (await refEntries(work, ['refs/tags/v2', 'refs/tags/v1'])).map((r) => [r.name, r.commit]),
    [
      ['v2', second],
      ['v1', first],
    ],
    'an annotated tag is peeled to its commit; in the order asked',
  );
  t.same(await refEntries(work, []), []);
});
