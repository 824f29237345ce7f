import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/cli.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { buildSource, startGitDaemon, uploadLfs } from './helpers.ts';

t.test('wharf import: follows the job to its end; exit 0, 1 and 2', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-cli-import-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = {
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    IMPORT_ALLOWED_HOSTS: 'loopback',
  };
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  t.equal((await runCli(['migrate'], env)).code, 0, 'a new database is set up on purpose');
  t.equal((await runCli(['org', 'create', 'acme'], env)).code, 0);

  for (const args of [
    ['import', daemon.url('source')],
    ['import', daemon.url('source'), 'acme'],
    ['import', daemon.url('source'), 'acme/x/y'],
    ['import', daemon.url('source'), 'acme/x', '--visibility', 'secret'],
    ['import', 'file:///etc', 'acme/x'],
    ['import', '-uhelp', 'acme/x'],
    ['import', 'ext::sh -c id', 'acme/x'],
  ]) {
    t.equal((await runCli(args, env)).code, 2, `usage: ${args.join(' ')}`);
  }

  const ok = await runCli(['import', daemon.url('source'), 'acme/copy', '--visibility', 'public', '--allow-missing-lfs'], env);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /^imported acme\/copy: 2 branches, 2 tags, 0 LFS objects \(3 missing at the source\), default branch trunk\n/);
  for (const f of [source.lfs.kept, source.lfs.old, source.lfs.absent])
    t.match(ok.stdout, `missing LFS object ${f.oid} (${f.size} bytes): `, 'each missing object with its reason');
  t.match(ok.stderr, /^import \d+: git:\/\/127\.0\.0\.1:\d+\/source\.git → acme\/copy\n/, 'the job, then its progress, on stderr');
  t.match(ok.stderr, /\nqueued +\[-{24}\] queued…\n/, 'the state stands where no percent is known yet');
  t.notMatch(ok.stderr, / +%/, 'never a blank percent');
  const percents = [...ok.stderr.matchAll(/\] +(\d+)%/g)].map((m) => Number(m[1]));
  t.same(
    percents,
    [...percents].sort((a, b) => a - b),
    `the percent never goes back: ${percents.join(' ')}`,
  );
  t.match(ok.stderr, /succeeded +\[#{24}\] 100% done[^\n]*\n$/);
  t.same(refList(await g.ok(['ls-remote', path.join(dir, 'repos', 'acme', 'copy.git')])), refList(await g.ok(['ls-remote', daemon.url('source')])));

  // The same source with its LFS objects served elsewhere: --lfs-url names the endpoint; the
  // one object the source never had is listed and makes the command fail.
  const upstream = await startWharf(t);
  const { token } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  await buildRepo(upstream, 'up', 'proj', 'public');
  await uploadLfs(upstream, 'up/proj', token, [source.lfs.kept, source.lfs.old]);
  const withLfs = await runCli(['import', daemon.url('source'), 'acme/with-lfs', '--lfs-url', `${upstream.url}/up/proj.git/info/lfs`], env);
  t.equal(withLfs.code, 1, 'missing LFS objects fail the command');
  t.match(withLfs.stdout, /^imported acme\/with-lfs: 2 branches, 2 tags, 2 LFS objects \(1 missing at the source\)/);
  t.match(withLfs.stdout, `missing LFS object ${source.lfs.absent.oid} (${source.lfs.absent.size} bytes): 404`);
  t.match(withLfs.stderr, /1 LFS objects missing at the source .*--allow-missing-lfs/);
  t.ok(fs.existsSync(path.join(dir, 'repos', 'acme', 'with-lfs.git')), 'the repository is there all the same');

  const taken = await runCli(['import', daemon.url('source'), 'acme/copy'], env);
  t.equal(taken.code, 1, 'name taken');
  t.match(taken.stderr, /already exists/);
  t.equal((await runCli(['import', daemon.url('source'), 'nope/copy'], env)).code, 1, 'no such org');
  const missing = await runCli(['import', daemon.url('nothing-here'), 'acme/other'], env);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /import failed: no Git repository found/);
  t.notOk(fs.existsSync(path.join(dir, 'repos', 'acme', 'other.git')));
});
