import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/cli.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { buildSource, startGitDaemon } from './helpers.ts';

t.test('wharf import: follows the job to its end; exit 0, 1 and 2', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-cli-import-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = { DATA_DIR: path.join(dir, 'data'), REPOS_DIR: path.join(dir, 'repos'), DATABASE_URL: database.url, LOG_LEVEL: 'silent', IMPORT_ALLOWED_HOSTS: 'loopback' };
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  t.equal((await runCli(['org', 'create', 'acme'], env)).code, 0);

  for (const args of [['import', daemon.url('source')], ['import', daemon.url('source'), 'acme'], ['import', daemon.url('source'), 'acme/x/y'], ['import', daemon.url('source'), 'acme/x', '--visibility', 'secret'], ['import', 'file:///etc', 'acme/x'], ['import', '-uhelp', 'acme/x'], ['import', 'ext::sh -c id', 'acme/x']]) {
    t.equal((await runCli(args, env)).code, 2, `usage: ${args.join(' ')}`);
  }

  const ok = await runCli(['import', daemon.url('source'), 'acme/copy', '--visibility', 'public'], env);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /^imported acme\/copy: 2 branches, 2 tags, 0 LFS objects \(3 missing at the source\), default branch trunk\n$/);
  t.match(ok.stderr, /^import \d+: git:\/\/127\.0\.0\.1:\d+\/source\.git → acme\/copy\n/, 'the job, then its progress, on stderr');
  t.match(ok.stderr, /succeeded +\[#{24}\] 100% done[^\n]*\n$/);
  t.same(refList(await g.ok(['ls-remote', path.join(dir, 'repos', 'acme', 'copy.git')])), refList(await g.ok(['ls-remote', daemon.url('source')])));

  const taken = await runCli(['import', daemon.url('source'), 'acme/copy'], env);
  t.equal(taken.code, 1, 'name taken');
  t.match(taken.stderr, /already exists/);
  t.equal((await runCli(['import', daemon.url('source'), 'nope/copy'], env)).code, 1, 'no such org');
  const missing = await runCli(['import', daemon.url('nothing-here'), 'acme/other'], env);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /import failed: no Git repository found/);
  t.notOk(fs.existsSync(path.join(dir, 'repos', 'acme', 'other.git')));
});
