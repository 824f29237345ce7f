import t from 'tap';
import path from 'node:path';
import { gitClient } from '../helpers/git.ts';
import { listFolderAt, objectAt, submodulesAt } from '../../src/git/tree.ts';

t.test('objectAt and listFolderAt read paths as data: spaces, colons, leading dashes inside names, empty and missing files', async (t) => {
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  const big = Buffer.alloc(200_000, 'a');
  const commit = await g.commit(work, 'shapes', {
    'a dir/x blob 1': 'spaced\n',
    'a dir/b:c.txt': 'colon\n',
    'a dir/x-y': 'dash\n',
    'empty.txt': '',
    'big.txt': big,
  });
  const dir = path.join(work, '.git');

  const spaced = await objectAt(dir, commit, ['a dir', 'x blob 1'], 1024);
  t.equal(spaced?.object.type, 'blob');
  t.equal(spaced?.content?.toString(), 'spaced\n', 'a name with spaces and a type word in it');
  t.equal((await objectAt(dir, commit, ['a dir', 'b:c.txt'], 1024))?.content?.toString(), 'colon\n', 'a colon in a name');
  const empty = await objectAt(dir, commit, ['empty.txt'], 1024);
  t.same(empty?.content, Buffer.alloc(0), 'an empty file has empty content');
  const capped = await objectAt(dir, commit, ['big.txt'], 1024);
  t.same([capped?.object.size, capped?.content], [big.length, null], 'over the cap: the size, not the content');
  t.ok((await objectAt(dir, commit, ['big.txt'], big.length))?.content?.equals(big), 'up to the cap: all of it');
  t.equal(await objectAt(dir, commit, ['a dir', 'x blob missing']), null, 'a missing path whose name looks like a header');
  t.equal(await objectAt(dir, commit, ['nope']), null);
  t.equal((await objectAt(dir, commit, []))?.object.type, 'tree', 'no path is the root folder');

  const listed = await listFolderAt(dir, commit, ['a dir']);
  t.same(
    listed?.map((e) => [e.name, e.size]),
    [
      ['b:c.txt', 6],
      ['x blob 1', 7],
      ['x-y', 5],
    ],
  );
  t.same(
    (await listFolderAt(dir, commit, []))?.map((e) => e.name),
    ['a dir', 'big.txt', 'empty.txt'],
    'folders first',
  );
  t.equal(await listFolderAt(dir, commit, ['big.txt']), null, 'a file is no folder');
  t.equal(await listFolderAt(dir, commit, ['nope']), null, 'nor is nothing');
});

t.test("submodulesAt maps each submodule's path to its URL, and is empty without a .gitmodules", async (t) => {
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  const plain = await g.commit(work, 'no submodules');
  const withModules = await g.commit(work, 'two submodules', {
    '.gitmodules': '[submodule "lib"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n[submodule "docs"]\n\turl = ../docs.git\n\tpath = docs\n',
  });
  const dir = path.join(work, '.git');
  t.same([...(await submodulesAt(dir, plain))], []);
  t.same([...(await submodulesAt(dir, withModules))].sort(), [
    ['docs', '../docs.git'],
    ['vendor/lib', 'https://example.com/lib.git'],
  ]);
});
