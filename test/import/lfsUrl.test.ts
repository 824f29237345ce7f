import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { buildSource, startGitDaemon, uploadLfs, waitForJob } from './helpers.ts';

t.test('lfs_url names the LFS endpoint of a git:// source; missing objects carry oid and reason; the figures are filled at the end', async (t) => {
  const upstream = await startWharf(t);
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const { token: upToken } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
  await buildRepo(upstream, 'up', 'proj', 'public');
  await uploadLfs(upstream, 'up/proj', upToken, [source.lfs.kept, source.lfs.old]);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });

  for (const [bad, why] of [
    ['ftp://127.0.0.1/x', /http or https/],
    [`http://sam:${upToken}@127.0.0.1/x`, /credentials/],
    ['not a url', /http or https/],
  ] as const) {
    const refused = await w.api('POST', '/api/v1/repos/import', {
      token,
      body: { source_url: daemon.url('source'), target_org: 'demo', name: 'refused', lfs_url: bad },
    });
    t.equal(refused.status, 422, bad);
    t.equal(refused.body.error.details[0].path, '/lfs_url');
    t.match(refused.body.error.details[0].message, why);
    t.notOk(refused.text.includes(upToken));
  }

  const lfsUrl = `${upstream.url}/up/proj.git/info/lfs`;
  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: daemon.url('source'), target_org: 'demo', name: 'copy', lfs_url: lfsUrl },
  });
  t.equal(created.status, 202, created.text);
  t.equal(created.body.lfs_url, lfsUrl);
  const seen: number[] = [];
  const job = await waitForJob(w, created.body.id, {
    token,
    done: (j) => {
      if (j.progress.percent !== null) seen.push(j.progress.percent);
      return j.finished_at !== null;
    },
  });
  t.equal(job.status, 'succeeded', job.error);
  t.equal(job.repository.lfs_objects, 2, 'both objects the endpoint holds, though the guess (https://127.0.0.1/…) would reach nothing');
  t.same(
    job.repository.missing_lfs_objects,
    [{ oid: source.lfs.absent.oid, size: source.lfs.absent.size, error: '404 Object does not exist' }],
    'the missing object with its reason',
  );
  t.equal(job.progress.percent, 100);
  t.same(
    seen,
    [...seen].sort((a, b) => a - b),
    `percent never goes back: ${seen.join(' ')}`,
  );
  t.ok(job.progress.objects_received > 10, `objects_received filled: ${job.progress.objects_received}`);
  t.ok(job.progress.bytes_received > 0, `bytes_received filled: ${job.progress.bytes_received}`);
  const res = await fetch(`${w.url}/demo/copy.git/info/lfs/objects/${source.lfs.kept.oid}`, {
    headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` },
  });
  t.same(Buffer.from(await res.arrayBuffer()), source.lfs.kept.content, 'served afterwards');
});

t.test('an LFS batch answer is read only up to its 16 MiB cap, while it streams', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  // A batch endpoint whose answer is 64 MiB of JSON, written only as fast as the reader takes it.
  let written = 0;
  let closed = false;
  const server = http.createServer(async (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/vnd.git-lfs+json' });
    res.on('close', () => (closed = true));
    const chunk = Buffer.alloc(256 * 1024, ' ');
    res.write('{"objects":[');
    while (!closed && written < 64 * 1024 * 1024) {
      written += chunk.length;
      if (!res.write(chunk)) await new Promise((r) => res.once('drain', r).once('close', r));
    }
    res.end(']}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (server.closeAllConnections(), server.close()));
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: daemon.url('source'), target_org: 'demo', name: 'capped', lfs_url: `http://127.0.0.1:${(server.address() as any).port}/lfs` },
  });
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'succeeded', job.error);
  t.same(job.repository.missing_lfs_objects.map((m: any) => m.oid).sort(), [source.lfs.kept.oid, source.lfs.old.oid, source.lfs.absent.oid].sort());
  t.match(job.repository.missing_lfs_objects[0].error, /larger than 16 MiB/);
  t.ok(closed, 'the reader hung up');
  t.ok(written < 32 * 1024 * 1024, `the reader stopped near the cap: ${Math.round(written / 1024 / 1024)} MiB written of 64`);
});
