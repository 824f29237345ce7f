import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildUser, startWharf } from '../helpers/wharf.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { buildSource, startGitDaemon, waitForJob } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

t.test('import from git daemon: every ref, HEAD, submodule gitlink; LFS without an endpoint listed missing', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });

  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: daemon.url('source'), target_org: 'demo', name: 'copy', visibility: 'internal' },
  });
  t.equal(created.status, 202, created.text);
  t.equal(created.headers.get('location'), `/api/v1/repos/import/${created.body.id}`);
  t.same(Object.keys(created.body).sort(), [
    'created_at',
    'duration_ms',
    'error',
    'error_code',
    'error_reason',
    'finished_at',
    'id',
    'lfs_url',
    'name',
    'progress',
    'repository',
    'retry_of',
    'source_url',
    'started_at',
    'status',
    'target_org',
    'visibility',
    'warnings',
  ]);
  t.same(Object.keys(created.body.progress).sort(), ['bytes_per_second', 'bytes_received', 'objects_received', 'objects_total', 'percent', 'phase']);
  t.equal(created.body.source_url, daemon.url('source'));
  t.equal(created.body.repository, null);

  const job = await waitForJob(w, created.body.id, { token });
  t.equal(job.status, 'succeeded', job.error);
  t.match(await (await fetch(`${w.url}/metrics`)).text(), 'wharf_imports{status="succeeded"} 1', '/metrics counts the finished import');
  t.equal(job.error, null);
  t.match(job.finished_at, /^\d{4}-/);
  t.equal(job.repository.full_name, 'demo/copy');
  t.equal(job.repository.default_branch, 'trunk');
  t.equal(job.repository.branches, 2);
  t.equal(job.repository.tags, 2);
  t.equal(job.repository.lfs_objects, 0, 'git:// has no LFS endpoint that answers here');
  t.equal(job.repository.commits, Number((await g.ok(['rev-list', '--count', '--all'], { cwd: source.bare })).trim()), 'every commit of the source counted');
  t.equal(job.repository.commits, 4);
  t.ok(job.repository.size_bytes > 0, 'its size on disk');
  // The operator's log line says where the import's time went, phase by phase. It is
  // written once the job's markers are cleared, just after its success is visible.
  const line = await waitFor(
    () =>
      w.logs
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'import succeeded' && l.import_id === created.body.id),
    { timeoutMs: 5_000, what: "the import's success line" },
  );
  const phases = ['copy_ms', 'check_ms', 'lfs_ms', 'finalize_ms'].map((k) => line?.[k]);
  t.ok(
    phases.every((ms) => Number.isInteger(ms) && ms >= 0),
    `the success line times the copy, the checks, the LFS fetch and the finalizing: ${phases.join(', ')} ms`,
  );
  t.ok(line?.copy_ms > 0, 'the copy took time');
  const sum = phases.reduce((a, b) => a + b, 0);
  t.ok(sum <= job.duration_ms + 100, `the phases (${sum} ms) fit in the job's duration (${job.duration_ms} ms)`);
  t.equal(job.duration_ms, Date.parse(job.finished_at) - Date.parse(job.started_at), 'duration from start to end');
  t.equal(job.error_code, null);
  t.same(
    job.repository.missing_lfs_objects.map((m: any) => m.oid).sort(),
    [source.lfs.kept.oid, source.lfs.old.oid, source.lfs.absent.oid].sort(),
    'every pointer in history found',
  );

  const dir = repoDir(w.config.reposDir, 'demo', 'copy');
  t.same(refList(await g.ok(['ls-remote', dir])), refList(await g.ok(['ls-remote', daemon.url('source')])), 'refs equal the source ls-remote');
  t.equal((await g.ok(['symbolic-ref', 'HEAD'], { cwd: dir })).trim(), 'refs/heads/trunk');
  t.match(await g.ok(['ls-tree', 'trunk', 'lib'], { cwd: dir }), `160000 commit ${source.submodule}\tlib`, 'submodule stays a gitlink');
  t.match(await g.ok(['show', 'trunk:.gitmodules'], { cwd: dir }), 'url = https://example.com/lib.git');
  t.equal((await g.ok(['config', 'receive.fsckObjects'], { cwd: dir })).trim(), 'true', 'configured like every hosted repository');
  t.notOk(fs.existsSync(path.join(dir, 'wharf-import-job')), 'no marker left');
  t.same(
    fs.readdirSync(path.join(w.config.reposDir, '.imports')).filter((n) => n.startsWith('job-')),
    [],
    'no temporary copy left',
  );

  const repo = await w.api('GET', '/api/v1/repos/demo/copy', { token });
  t.equal(repo.status, 200);
  t.equal(repo.body.visibility, 'internal');
  t.equal(repo.body.default_branch, 'trunk');

  const list = await w.api('GET', '/api/v1/repos/import?org=demo', { token });
  t.equal(list.status, 200);
  t.same(
    list.body.map((j: any) => j.id),
    [created.body.id],
  );

  // The name is now taken by the repository.
  const again = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: daemon.url('source'), target_org: 'demo', name: 'copy' } });
  t.equal(again.status, 409);
});
