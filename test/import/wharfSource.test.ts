import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildUser, startWharf } from '../helpers/wharf.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { createRepository } from '../../src/domain/repos.ts';
import { askpassProgram, GitRunError, remoteGit } from '../../src/remote/gitRemote.ts';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { addBulk, buildSource, lfsFile, startProxy, uploadLfs, waitForJob } from './helpers.ts';

t.test('import from a Wharf over HTTP with credentials: refs, HEAD, LFS served afterwards; credentials nowhere', async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const upOrg = await createOrg(upstream.running.services.db, 'up');
  await createRepository(upstream.running.services, { org: upOrg, name: 'proj', default_branch: 'trunk' });
  const { token: upstreamToken } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  await g.ok(['push', '-q', '--mirror', repoUrl(upstream, 'up/proj', upstreamToken)], { cwd: source.bare });
  await uploadLfs(upstream, 'up/proj', upstreamToken, [source.lfs.kept, source.lfs.old]);
  const sourceRefs = refList(await g.ok(['ls-remote', repoUrl(upstream, 'up/proj', upstreamToken)]));

  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const plainUrl = `${upstream.url}/up/proj.git`;
  // Credentials in the URL's user info for one job, as separate fields for the other.
  const inUrl = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: repoUrl(upstream, 'up/proj', upstreamToken), target_org: 'demo', name: 'via-url' },
  });
  t.equal(inUrl.status, 202, inUrl.text);
  t.equal(inUrl.body.source_url, plainUrl, 'user info removed from the stored URL');
  const inFields = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: plainUrl, target_org: 'demo', name: 'via-fields', visibility: 'public', auth_username: 'sam', auth_password: upstreamToken },
  });
  t.equal(inFields.status, 202, inFields.text);
  t.notOk(JSON.stringify(inFields.body).includes(upstreamToken));

  // A host name: resolved, checked, and pinned for git (http.curloptResolve).
  const byName = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: plainUrl.replace('127.0.0.1', 'localhost'), target_org: 'demo', name: 'by-name', auth_password: upstreamToken },
  });
  t.equal(byName.status, 202, byName.text);
  for (const [created, name] of [
    [inUrl, 'via-url'],
    [inFields, 'via-fields'],
    [byName, 'by-name'],
  ] as const) {
    const job = await waitForJob(w, created.body.id, { token });
    t.equal(job.status, 'succeeded', job.error);
    t.equal(job.repository.default_branch, 'trunk');
    t.equal(job.repository.lfs_objects, 2, 'the object on trunk and the one only in history');
    t.same(
      job.repository.missing_lfs_objects.map((m: any) => m.oid),
      [source.lfs.absent.oid],
      'the object the source never had is listed, not fatal',
    );
    t.same(refList(await g.ok(['ls-remote', repoDir(w.config.reposDir, 'demo', name)])), sourceRefs, `${name}: refs equal the source`);
  }

  // A git lfs clone from this Wharf gets the real bytes, including history-only objects.
  // (absent.bin was never at the source, so the checkout leaves it a pointer.)
  await g.ok(['lfs', 'install', '--skip-repo']);
  const clone = path.join(g.dir, 'lfs-clone');
  await g.ok(['clone', '-q', repoUrl(w, 'demo/via-fields', token), clone], { env: { GIT_LFS_SKIP_SMUDGE: '1' } });
  await g.ok(['lfs', 'pull', '--include', 'kept.bin'], { cwd: clone });
  t.same(fs.readFileSync(path.join(clone, 'kept.bin')), source.lfs.kept.content, 'LFS bytes equal the source');
  await g.ok(['lfs', 'fetch', 'origin', 'v0.1'], { cwd: clone });
  const old = source.lfs.old.oid;
  t.same(
    fs.readFileSync(path.join(clone, '.git', 'lfs', 'objects', old.slice(0, 2), old.slice(2, 4), old)),
    source.lfs.old.content,
    'history-only object served too',
  );

  // Wrong credentials: a failed job, no repository, and the same name can be used again.
  const wrong = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: plainUrl, target_org: 'demo', name: 'retry', auth_username: 'sam', auth_password: 'wharf_not-the-token' },
  });
  const failed = await waitForJob(w, wrong.body.id, { token });
  t.equal(failed.status, 'failed');
  t.match(failed.error, /authentication|credentials|no Git repository/);
  t.notOk(failed.error.includes('wharf_not-the-token'));
  t.notOk(fs.existsSync(repoDir(w.config.reposDir, 'demo', 'retry')), 'no directory left');
  t.equal((await w.api('GET', '/api/v1/repos/demo/retry', { token })).status, 404, 'no repository left');
  const retried = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: plainUrl, target_org: 'demo', name: 'retry', auth_password: upstreamToken },
  });
  t.equal(retried.status, 202, 'the name is free again');
  t.equal((await waitForJob(w, retried.body.id, { token })).status, 'succeeded');

  // Credentials appear in no job record, API answer or log line.
  const db = w.running.services.db;
  const rows = await db('import_jobs').select('*');
  t.ok(
    rows.filter((r: any) => r.status !== 'failed').every((r: any) => r.credentials === null),
    'credentials cleared when each job succeeded',
  );
  // A failed job keeps them sealed for a retry with the same settings (test/import/retry.test.ts).
  t.match(rows.find((r: any) => r.status === 'failed').credentials, /^v1:/, 'sealed where a job failed');
  for (const secret of [upstreamToken, 'wharf_not-the-token']) {
    t.notOk(JSON.stringify(rows).includes(secret), 'not in any job row');
    t.notOk(w.logs.join('').includes(secret), 'not in any log line');
    const list = await w.api('GET', '/api/v1/repos/import', { token });
    t.notOk(list.text.includes(secret), 'not in any API answer');
  }
});

t.test('LFS objects are asked for in batches of at most 100', async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const many = Array.from({ length: 150 }, () => lfsFile(200));
  const source = await buildSource(g, base, 'many', async (work) => {
    await g.commit(work, 'many LFS files', Object.fromEntries(many.map((f, i) => [`many/${i}.bin`, f.pointer])));
  });
  const upOrg = await createOrg(upstream.running.services.db, 'up');
  await createRepository(upstream.running.services, { org: upOrg, name: 'many', default_branch: 'trunk' });
  const { token: upstreamToken } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  await g.ok(['push', '-q', '--mirror', repoUrl(upstream, 'up/many', upstreamToken)], { cwd: source.bare });
  await uploadLfs(upstream, 'up/many', upstreamToken, [...many, source.lfs.kept, source.lfs.old]);
  const before = upstream.logs.length;
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: `${upstream.url}/up/many.git`, target_org: 'demo', name: 'many', auth_password: upstreamToken },
  });
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'succeeded', job.error);
  t.equal(job.repository.lfs_objects, 152);
  const batches = upstream.logs
    .slice(before)
    .map((l) => JSON.parse(l))
    .filter((l) => l.route === '/:org/:repo/info/lfs/objects/batch');
  t.equal(batches.length, 2, '153 objects in two batch requests (100 + 53)');
  const linked = await w.running.services
    .db('repository_lfs_objects')
    .where('repository_id', (await w.api('GET', '/api/v1/repos/demo/many')).body.id)
    .count({ n: '*' });
  t.equal(Number(linked[0].n), 152, 'every fetched object linked to the new repository');
});

t.test('while git runs, the credentials are in no process argument', async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base, 'slow', (work) => addBulk(g, work, 16, 64 * 1024));
  const upOrg = await createOrg(upstream.running.services.db, 'up');
  await createRepository(upstream.running.services, { org: upOrg, name: 'slow', default_branch: 'trunk' });
  const { token: upstreamToken } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  await g.ok(['push', '-q', '--mirror', repoUrl(upstream, 'up/slow', upstreamToken)], { cwd: source.bare });
  const proxy = await startProxy(t, Number(new URL(upstream.url).port), { rate: 8 * 1024 });
  const sourceUrl = `http://127.0.0.1:${proxy.port}/up/slow.git`;
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: sourceUrl, target_org: 'demo', name: 'slow', auth_username: 'sam', auth_password: upstreamToken },
  });
  t.equal(created.status, 202);
  let gitSeen = 0;
  let leaked = 0;
  const job = await waitForJob(w, created.body.id, {
    done: (job) => {
      for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
        let cmdline: string;
        try {
          cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue; // gone
        }
        if (cmdline.includes(`127.0.0.1:${proxy.port}`)) gitSeen++;
        if (cmdline.includes(upstreamToken)) leaked++;
      }
      return job.finished_at !== null;
    },
  });
  t.equal(job.status, 'succeeded', job.error);
  t.ok(gitSeen > 0, 'git processes talking to the source were seen');
  t.equal(leaked, 0, 'no process argument held the token');
});

t.test('git connects to the pinned address only: a name git cannot resolve works through http.curloptResolve', async (t) => {
  const upstream = await startWharf(t);
  const upOrg = await createOrg(upstream.running.services.db, 'up');
  await createRepository(upstream.running.services, { org: upOrg, name: 'pinned', visibility: 'private' });
  const { token } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  const port = new URL(upstream.url).port;
  const askpass = await askpassProgram(path.join(upstream.dir, 'askpass'));
  const url = `http://wharf-pinned.invalid:${port}/up/pinned.git`;
  const options = { credentials: { username: 'sam', password: token }, askpass };
  const pin = ['-c', `http.curloptResolve=wharf-pinned.invalid:${port}:127.0.0.1`];
  t.equal(
    await remoteGit(['ls-remote', '--', url], { ...options, pin }),
    '',
    'the private (empty) repository reached through the pin, credentials from askpass',
  );
  const anonymous = await remoteGit(['ls-remote', '--', url], { credentials: null, askpass, pin }).catch((err) => err);
  t.match(anonymous?.failure?.message, /authentication/, 'without credentials the same call is refused');
  await t.rejects(remoteGit(['ls-remote', '--', url], { ...options, pin: [] }), GitRunError, 'without the pin the name does not resolve');
});
