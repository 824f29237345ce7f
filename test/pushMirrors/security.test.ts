import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { refList, repoUrl } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { lfsClient, mirrorSettled } from './helpers.ts';

t.test("a pointer naming another repository's LFS object never sends its bytes; the refs still go", async (t) => {
  const remote = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(remote, 'dst', 'mirror');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  await buildRepo(w, 'acme', 'secret');
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const g = await lfsClient(t);
  // The object lives in acme/secret only.
  const secret = path.join(g.dir, 'secret');
  await g.ok(['init', '-q', secret]);
  await g.ok(['lfs', 'track', '*.bin'], { cwd: secret });
  const content = randomBytes(4000);
  const oid = createHash('sha256').update(content).digest('hex');
  await g.commit(secret, 'secret', { 'data.bin': content });
  await g.ok(['push', '-q', repoUrl(w, 'acme/secret', ann.token), 'main'], { cwd: secret });
  t.equal(await w.running.services.lfs.size(oid), content.length);
  // acme/proj holds a pointer to it, and nothing more.
  const proj = path.join(g.dir, 'proj');
  await g.ok(['init', '-q', proj]);
  await g.commit(proj, 'a pointer to an object we never uploaded', {
    'stolen.txt': `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${content.length}\n`,
  });
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, username: 'bob', password: bob.token },
  });
  t.equal(created.status, 201, created.text);
  const before = Date.now();
  await g.ok(['push', '-q', repoUrl(w, 'acme/proj', ann.token), 'main'], { cwd: proj });
  await w.pushesRecorded();
  const row = await mirrorSettled(w, created.body.id, before);
  t.equal(row.last_sync_status, 'succeeded', row.last_error ?? '');
  t.same(
    refList(await g.ok(['ls-remote', repoUrl(remote, 'dst/mirror', bob.token)])),
    refList(await g.ok(['ls-remote', repoUrl(w, 'acme/proj', ann.token)])),
    'the refs went',
  );
  t.equal(await remote.running.services.lfs.size(oid), null, 'the object did not');
  t.equal((await remote.running.services.db('lfs_objects').where('oid', oid)).length, 0);
});

t.test('while git pushes, the credentials are in no process argument and in no file of the repository', async (t) => {
  const remote = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(remote, 'dst', 'mirror');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const g = await lfsClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  // Incompressible bytes, so the push takes long enough to be seen.
  await g.commit(src, 'big', { 'big.dat': randomBytes(24 * 1024 * 1024) });
  await g.ok(['push', '-q', repoUrl(w, 'acme/proj', ann.token), 'main'], { cwd: src });
  await w.pushesRecorded();
  let scanning = true;
  let gitSeen = 0;
  let leaked = 0;
  const scan = (async () => {
    while (scanning) {
      for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
        let cmdline: string;
        try {
          cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue; // gone
        }
        if (cmdline.includes('dst/mirror.git')) gitSeen++;
        if (cmdline.includes(bob.token)) leaked++;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const before = Date.now();
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', {
    token: ann.token,
    body: { url: `${remote.url}/dst/mirror.git`, username: 'bob', password: bob.token },
  });
  t.equal(created.status, 201, created.text);
  const row = await mirrorSettled(w, created.body.id, before);
  scanning = false;
  await scan;
  t.equal(row.last_sync_status, 'succeeded', row.last_error ?? '');
  t.ok(gitSeen > 0, 'git processes talking to the remote were seen');
  t.equal(leaked, 0, 'no process argument held the token');
  const dir = repoDir(w.config.reposDir, 'acme', 'proj');
  for (const file of fs.readdirSync(dir, { recursive: true })) {
    const full = path.join(dir, String(file));
    if (fs.statSync(full).isFile() && fs.statSync(full).size < 1024 * 1024) t.notOk(fs.readFileSync(full, 'latin1').includes(bob.token), `not in ${file}`);
  }
  t.notOk(fs.readFileSync(path.join(dir, 'config'), 'utf8').includes('dst/mirror'), 'no remote written into the repository config');
});
