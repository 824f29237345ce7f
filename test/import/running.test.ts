import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startWharf } from '../helpers/wharf.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { createImportRunner } from '../../src/import/runner.ts';
import type { RunnerOptions } from '../../src/import/execute.ts';
import { addBulk, buildSource, startGitDaemon, startProxy, waitForJob } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/** A git daemon serving a source with `bulk` commits of `bytesEach` random bytes. */
async function bigSource(t: any, bulk: number, bytesEach: number) {
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await buildSource(g, base, 'big', (work) => addBulk(g, work, bulk, bytesEach));
  const daemon = await startGitDaemon(t, base);
  return { g, daemon };
}

function wharfWith(t: any, options: RunnerOptions) {
  return startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, workers: [(s) => createImportRunner(s, { pollMs: 100, ...options })] });
}

t.test('progress is reported while cloning; a running job is canceled and leaves nothing', async (t) => {
  const { daemon } = await bigSource(t, 30, 64 * 1024);
  const proxy = await startProxy(t, daemon.port, { rate: 8 * 1024 });
  const w = await wharfWith(t, {});
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: `git://127.0.0.1:${proxy.port}/big.git`, target_org: 'demo', name: 'slow' },
  });
  t.equal(created.status, 202);
  t.equal(created.body.status, 'queued');
  const seen: any[] = [];
  const running = await waitForJob(w, created.body.id, {
    done: (job) => (seen.push(job), job.status === 'cloning' && job.progress.phase === 'receiving_objects' && job.progress.bytes_received > 0),
  });
  t.ok(running.progress.percent >= 0 && running.progress.percent < 100, `percent ${running.progress.percent}`);
  t.ok(running.progress.objects_received > 0, 'objects counted');
  t.ok(
    seen.some((j) => j.status === 'cloning'),
    'cloning seen',
  );

  const canceled = await w.api('DELETE', `/api/v1/repos/import/${created.body.id}`);
  t.equal(canceled.status, 200);
  t.equal(canceled.body.status, 'canceled');
  t.equal(canceled.body.repository, null);
  const tmp = path.join(w.config.reposDir, '.imports', `job-${created.body.id}.git`);
  await waitFor(() => !fs.existsSync(tmp), { timeoutMs: 10_000, intervalMs: 100, what: 'the temporary copy to be removed' }).catch(() => {});
  t.notOk(fs.existsSync(tmp), 'temporary copy removed');
  t.notOk(fs.existsSync(repoDir(w.config.reposDir, 'demo', 'slow')), 'no repository directory');
  t.equal((await waitForJob(w, created.body.id)).status, 'canceled', 'stays canceled');
  t.equal((await w.api('GET', '/api/v1/repos/demo/slow')).status, 404);
});

t.test('the incremental copy (forced small): shallow, deepen in steps, then the rest', async (t) => {
  const { g, daemon } = await bigSource(t, 9, 1000);
  const w = await wharfWith(t, { incrementalAboveBytes: 0, deepenStep: 2, maxSteps: 3 });
  const created = await w.api('POST', '/api/v1/repos/import', { body: { source_url: daemon.url('big'), target_org: 'demo', name: 'stepped' } });
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'succeeded', job.error);
  const row = await w.running.services.db('import_jobs').where('id', job.id).first();
  t.equal(row.strategy, 'incremental');
  const dir = repoDir(w.config.reposDir, 'demo', 'stepped');
  t.same(refList(await g.ok(['ls-remote', dir])), refList(await g.ok(['ls-remote', daemon.url('big')])));
  t.equal((await g.ok(['rev-parse', '--is-shallow-repository'], { cwd: dir })).trim(), 'false', 'whole history');
  t.equal(
    await g.ok(['rev-list', '--all', '--count'], { cwd: dir }),
    await g.ok(['--git-dir', path.join(g.dir, 'served', 'big.git'), 'rev-list', '--all', '--count']),
  );
  await g.ok(['fsck', '--strict', '--no-dangling'], { cwd: dir });
  t.equal((await g.ok(['symbolic-ref', 'HEAD'], { cwd: dir })).trim(), 'refs/heads/trunk');
});

t.test('a full clone that breaks off is retried incrementally and finishes', async (t) => {
  const { g, daemon } = await bigSource(t, 10, 32 * 1024);
  const proxy = await startProxy(t, daemon.port, { cutAfter: 100 * 1024 });
  const w = await wharfWith(t, {});
  const url = `git://127.0.0.1:${proxy.port}/big.git`;
  const created = await w.api('POST', '/api/v1/repos/import', { body: { source_url: url, target_org: 'demo', name: 'flaky' } });
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'succeeded', job.error);
  t.equal(proxy.cuts, 1, 'the connection was cut once');
  const row = await w.running.services.db('import_jobs').where('id', job.id).first();
  t.equal(row.attempts, 2, 'a second attempt');
  t.equal(row.strategy, 'incremental');
  t.same(refList(await g.ok(['ls-remote', repoDir(w.config.reposDir, 'demo', 'flaky')])), refList(await g.ok(['ls-remote', daemon.url('big')])));
});

t.test('IMPORT_TIMEOUT ends a job that takes too long: failed, nothing left', async (t) => {
  const { daemon } = await bigSource(t, 20, 64 * 1024);
  const proxy = await startProxy(t, daemon.port, { rate: 4 * 1024 });
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_TIMEOUT: '2s' }, workers: [(s) => createImportRunner(s, { pollMs: 100 })] });
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: `git://127.0.0.1:${proxy.port}/big.git`, target_org: 'demo', name: 'late' },
  });
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'failed');
  t.match(job.error, /timed out after 2s \(IMPORT_TIMEOUT\)/);
  t.notOk(fs.existsSync(repoDir(w.config.reposDir, 'demo', 'late')));
  t.notOk(fs.existsSync(path.join(w.config.reposDir, '.imports', `job-${job.id}.git`)), 'temporary copy removed');
});

t.test('a crash between the move into place and the commit: the next attempt takes the copy back and finishes', async (t) => {
  const { g, daemon } = await bigSource(t, 1, 100);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, workers: [] });
  const created = await w.api('POST', '/api/v1/repos/import', { body: { source_url: daemon.url('big'), target_org: 'demo', name: 'moved' } });
  // What the dead process left: the complete copy already renamed into place, with its markers, and no row.
  const dir = repoDir(w.config.reposDir, 'demo', 'moved');
  await g.ok(['clone', '-q', '--mirror', daemon.url('big'), dir]);
  fs.writeFileSync(path.join(dir, 'wharf-import-job'), String(created.body.id));
  fs.writeFileSync(path.join(dir, 'wharf-import-cloned'), 'trunk');
  await w.running.services.db('import_jobs').where('id', created.body.id).update({ status: 'finalizing', attempts: 1 });
  const runner = createImportRunner(w.running.services, { pollMs: 100 });
  await runner.start();
  t.teardown(() => runner.stop());
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'succeeded', job.error);
  t.equal(job.repository.default_branch, 'trunk');
  t.same(refList(await g.ok(['ls-remote', dir])), refList(await g.ok(['ls-remote', daemon.url('big')])));
  // The markers go just after the commit that the job's success is part of.
  const markers = () => fs.readdirSync(dir).filter((n) => n.startsWith('wharf-import'));
  await waitFor(() => markers().length === 0, { timeoutMs: 5_000, intervalMs: 100, what: 'the import markers to be removed' }).catch(() => {});
  t.same(markers(), [], 'markers removed after the commit');
  t.equal((await w.api('GET', '/api/v1/repos/demo/moved')).status, 200);
});
