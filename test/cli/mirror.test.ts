import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/cli.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';

t.test('wharf import --mirror, then wharf mirror sync: follows the sync to its end; exit 0, 1 and 2', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-cli-mirror-'));
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
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'First');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  const bare = path.join(served, 'tool.git');
  await g.ok(['clone', '-q', '--bare', work, bare]);
  const daemon = await startGitDaemon(t, served);
  t.equal((await runCli(['migrate'], env)).code, 0, 'a new database is set up on purpose');
  t.equal((await runCli(['org', 'create', 'acme'], env)).code, 0);
  // The mirror's refs as clients see them (its staging namespace, refs/wharf-mirror/, is never advertised).
  const mirrorRefs = async () =>
    refList(await g.ok(['ls-remote', path.join(dir, 'repos', 'acme', 'tool.git')])).filter((r) => !r.includes(' refs/wharf-mirror/'));

  t.equal((await runCli(['import', daemon.url('tool'), 'acme/x', '--mirror-interval', '1h'], env)).code, 2, 'an interval without --mirror is usage');
  t.equal((await runCli(['import', daemon.url('tool'), 'acme/x', '--mirror', '--mirror-interval', '30s'], env)).code, 2, 'under 1m is usage');
  const imported = await runCli(['import', daemon.url('tool'), 'acme/tool', '--mirror', '--mirror-interval', '2h'], env);
  t.equal(imported.code, 0, imported.stderr);

  await g.commit(work, 'Second');
  await g.ok(['branch', 'feature'], { cwd: work });
  await g.ok(['push', '-q', bare, 'main', 'feature'], { cwd: work });
  const synced = await runCli(['mirror', 'sync', 'acme/tool'], env);
  t.equal(synced.code, 0, synced.stderr);
  t.match(synced.stderr, `mirror acme/tool: sync from ${daemon.url('tool')}\n`);
  t.match(synced.stdout, /^synced acme\/tool from git:\/\/127\.0\.0\.1:\d+\/tool\.git; next sync \d{4}-\d\d-\d\dT/);
  t.same(await mirrorRefs(), refList(await g.ok(['ls-remote', bare])), 'refs equal the source');

  // A source that is gone: the sync fails, the mirror keeps its refs, exit 1 with the error.
  const before = await mirrorRefs();
  fs.renameSync(bare, `${bare}.away`);
  const failed = await runCli(['mirror', 'sync', 'acme/tool'], env);
  t.equal(failed.code, 1);
  t.match(failed.stderr, /wharf: sync failed: /);
  t.same(await mirrorRefs(), before, 'the last good state is kept');

  t.equal((await runCli(['mirror', 'sync', 'acme'], env)).code, 2, 'not <org>/<repo>: usage');
  t.equal((await runCli(['mirror', 'sync', 'acme/nope'], env)).code, 1, 'no such repository');
  t.equal((await runCli(['org', 'create', 'plain'], env)).code, 0);
  fs.renameSync(`${bare}.away`, bare);
  t.equal((await runCli(['import', daemon.url('tool'), 'plain/copy'], env)).code, 0);
  const notMirror = await runCli(['mirror', 'sync', 'plain/copy'], env);
  t.equal(notMirror.code, 1, 'an ordinary repository is not a mirror');
  t.match(notMirror.stderr, 'is not a mirror');
});
