import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { repoDir } from '../../src/git/bare.ts';
import { PACK_REFS_AFTER } from '../../src/pushes/land.ts';

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
