import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { repoDir } from '../../src/git/bare.ts';
import { PACK_REFS_AFTER } from '../../src/pushes/land.ts';
import { addBulk } from '../import/helpers.ts';

/** Loose tag files under refs/tags (what a page listing tags reads one by one). */
function looseTags(dir: string): number {
  return fs.readdirSync(path.join(dir, 'refs', 'tags')).length;
}

t.test('a push of many refs leaves them packed; a small push leaves git as it is; every ref still reads', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app', 'public');
  const dir = repoDir(w.running.services.config.reposDir, 'acme', 'app');
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'one');
  const url = repoUrl(w, 'acme/app', w.adminToken);

  await g.ok(['tag', 'small-1'], { cwd: work });
  await g.ok(['push', '-q', url, 'main', 'small-1'], { cwd: work });
  await w.pushesRecorded();
  t.equal(looseTags(dir), 1, 'two refs stay loose, as git leaves them');

  const many = PACK_REFS_AFTER + 8;
  for (let i = 0; i < many; i++) await g.ok(['tag', `v1.${i}`], { cwd: work });
  await g.ok(['push', '-q', url, '--tags'], { cwd: work });
  await w.pushesRecorded();
  await waitFor(() => looseTags(dir) === 0, { what: 'the loose tags to be packed' });
  const packed = fs.readFileSync(path.join(dir, 'packed-refs'), 'utf8');
  t.equal(packed.split('\n').filter((l) => l.includes(' refs/tags/')).length, many + 1, 'every tag is in packed-refs');
  const listed = await g.ok(['ls-remote', '--tags', url], { cwd: work });
  t.equal(listed.trim().split('\n').length, many + 1, 'and every tag is still served');
  // A later push over a packed ref updates it as usual.
  await g.commit(work, 'two');
  await g.ok(['tag', '-f', 'v1.0'], { cwd: work });
  await g.ok(['push', '-q', '-f', url, 'main', 'v1.0'], { cwd: work });
  const head = (await g.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
  t.match(await g.ok(['ls-remote', url, 'refs/tags/v1.0'], { cwd: work }), head, 'a packed tag moves');
});

t.test("git's gc --auto still runs after a push (Wharf runs it once the push lands, receive-pack no longer does)", async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'tidy', 'public');
  const dir = repoDir(w.running.services.config.reposDir, 'acme', 'tidy');
  const g = gitClient(t);
  // More than one pack is too many: the next gc --auto repacks them into one.
  await g.ok(['config', 'gc.autoPackLimit', '1'], { cwd: dir });
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', '-b', 'main', work]);
  const url = repoUrl(w, 'acme/tidy', w.adminToken);
  const packs = () => fs.readdirSync(path.join(dir, 'objects', 'pack')).filter((name) => name.endsWith('.pack')).length;
  // Two pushes of 120 objects each (above git's unpack limit): each arrives as a pack git keeps.
  for (const round of [1, 2]) {
    await addBulk(g, work, 40, 1024);
    await g.ok(['push', '-q', url, 'main'], { cwd: work });
    await w.pushesRecorded();
    if (round === 1) t.equal(packs(), 1, 'the first push leaves one pack');
  }
  await waitFor(() => packs() === 1, { what: "gc --auto to repack the second push's pack with the first" });
  t.equal(packs(), 1, 'one pack left');
  await g.ok(['fsck', '--no-progress', '--no-dangling'], { cwd: dir }); // every object still there and whole
  t.equal((await g.ok(['rev-parse', 'main'], { cwd: dir })).trim(), (await g.ok(['rev-parse', 'main'], { cwd: work })).trim());
});
