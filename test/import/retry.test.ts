import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { buildUser, startWharf } from '../helpers/wharf.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { createRepository } from '../../src/domain/repos.ts';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { buildSource, waitForJob } from './helpers.ts';

t.test('a failed import keeps its settings and sealed credentials; a retry takes them over and succeeds once the source is fixed', async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const db = w.running.services.db;
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const upOrg = await createOrg(upstream.running.services.db, 'up');
  const { token: upstreamToken } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const plainUrl = `${upstream.url}/up/proj.git`;

  // The repository is not at the source yet.
  const first = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: plainUrl, target_org: 'demo', name: 'proj', visibility: 'public', auth_username: 'sam', auth_password: upstreamToken },
  });
  t.equal(first.status, 202, first.text);
  const failed = await waitForJob(w, first.body.id, { token });
  t.equal(failed.status, 'failed');
  t.equal(failed.error_code, 'not_found', failed.error);
  t.equal(failed.error_reason, 'The repository was not found at the source.');
  t.ok(failed.error, "git's own words are kept beside the reason");
  t.equal(failed.repository, null);
  t.match(failed.started_at, /^\d{4}-/);
  t.equal(failed.duration_ms, Date.parse(failed.finished_at) - Date.parse(failed.started_at));
  t.notOk(JSON.stringify(failed).includes(upstreamToken), 'the credentials are in no answer');
  const kept = await db('import_jobs').where('id', failed.id).first('credentials');
  t.ok(kept.credentials, 'the failed job keeps its credentials for a retry');
  t.notOk(String(kept.credentials).includes(upstreamToken), 'sealed, not in the clear');

  // The source is fixed: the repository exists (private: only the credentials reach it).
  await createRepository(upstream.running.services, { org: upOrg, name: 'proj', default_branch: 'trunk', visibility: 'private' });
  await g.ok(['push', '-q', '--mirror', repoUrl(upstream, 'up/proj', upstreamToken)], { cwd: source.bare });

  const { token: memberToken } = await buildUser(w, 'mona', { org: 'demo', role: 'member' });
  t.equal((await w.api('POST', `/api/v1/repos/import/${failed.id}/retry`, { token: memberToken })).status, 403, 'members may not retry');

  const retried = await w.api('POST', `/api/v1/repos/import/${failed.id}/retry`, { token });
  t.equal(retried.status, 202, retried.text);
  t.equal(retried.headers.get('location'), `/api/v1/repos/import/${retried.body.id}`);
  t.match(retried.body, { retry_of: failed.id, source_url: plainUrl, target_org: 'demo', name: 'proj', visibility: 'public', lfs_url: null, status: 'queued' });
  t.equal((await db('import_jobs').where('id', failed.id).first('credentials')).credentials, null, 'the credentials moved to the retry');
  t.equal((await w.api('POST', `/api/v1/repos/import/${failed.id}/retry`, { token })).status, 409, 'a job is retried once');

  const done = await waitForJob(w, retried.body.id, { token });
  t.equal(done.status, 'succeeded', done.error);
  t.equal(done.error_code, null);
  t.equal(done.repository.commits, Number((await g.ok(['rev-list', '--count', '--all'], { cwd: source.bare })).trim()));
  t.equal(done.repository.branches, 2);
  t.equal(done.repository.tags, 2);
  t.equal(done.repository.lfs_objects, 0, 'no LFS objects were uploaded to the source');
  t.ok(done.repository.size_bytes > 0);
  t.same(refList(await g.ok(['ls-remote', repoUrl(w, 'demo/proj', token)])), refList(await g.ok(['ls-remote', source.bare])), 'every ref arrived');
  t.equal((await w.api('POST', `/api/v1/repos/import/${done.id}/retry`, { token })).status, 409, 'only a failed import can be retried');

  const list = await w.api('GET', '/api/v1/repos/import?org=demo', { token });
  t.same(
    list.body.map((j: any) => [j.id, j.status, j.retry_of]),
    [
      [done.id, 'succeeded', failed.id],
      [failed.id, 'failed', null],
    ],
  );

  // Without credentials the private repository refuses: a reason of its own.
  const anonymous = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: plainUrl, target_org: 'demo', name: 'anon' } });
  const refused = await waitForJob(w, anonymous.body.id, { token });
  t.equal(refused.error_code, 'auth_failed', refused.error);
  t.equal(refused.error_reason, 'The source refused the credentials.');
});

t.test('a source nothing listens on: "could not be reached"', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
  for (const scheme of ['git', 'http']) {
    const url = `${scheme}://127.0.0.1:${closed}/x.git`;
    const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: url, target_org: 'demo', name: `x-${scheme}` } });
    t.equal(created.status, 202, created.text);
    const job = await waitForJob(w, created.body.id, { token });
    t.equal(job.error_code, 'unreachable', job.error);
    t.equal(job.error_reason, 'The source could not be reached.');
  }
});
