import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { startServeProcess } from '../helpers/serveProcess.ts';
import { gitClient } from '../helpers/git.ts';
import { lfsFile, startGitDaemon, type LfsFile } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * An LFS server whose batch answer sends each object to a download href of its own kind:
 * `404`, `403`, `r<N>` (N redirects, then the object with 200), `meta` (a redirect to a
 * metadata address the host policy refuses). Counts the requests each path got.
 */
async function lfsServer(t: { teardown(fn: () => unknown): void }, kinds: Map<string, { kind: string; file: LfsFile }>) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url!);
    const base = `http://127.0.0.1:${(server.address() as any).port}`;
    if (req.method === 'POST' && req.url === '/lfs/objects/batch') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const objects = JSON.parse(body).objects.map(({ oid, size }: any) => ({
          oid,
          size,
          actions: { download: { href: `${base}/dl/${kinds.get(oid)!.kind}/${oid}` } },
        }));
        res.writeHead(200, { 'content-type': 'application/vnd.git-lfs+json' });
        res.end(JSON.stringify({ transfer: 'basic', objects }));
      });
      return;
    }
    const m = /^\/dl\/([^/]+)\/([0-9a-f]{64})$/.exec(req.url!);
    const entry = m && kinds.get(m[2]);
    if (!m || !entry) return void res.writeHead(400).end();
    if (m[1] === '404' || m[1] === '403') return void res.writeHead(Number(m[1]), { 'content-type': 'text/plain' }).end('no such object\n'.repeat(100));
    if (m[1] === 'meta') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end('moved');
    const left = Number(m[1].slice(1));
    if (left > 0) return void res.writeHead(302, { location: `/dl/r${left - 1}/${m[2]}` }).end(`moved, ${left} to go`);
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(entry.file.content);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (server.closeAllConnections(), server.close()));
  return { url: `http://127.0.0.1:${(server.address() as any).port}/lfs`, hits };
}

t.test('LFS downloads that answer 404, 403 or redirect: the node stays up, redirects up to 3 are followed, the rest is missing', async (t) => {
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const files = { notFound: lfsFile(1200), forbidden: lfsFile(1300), redirected: lfsFile(1400), tooMany: lfsFile(1500), metadata: lfsFile(1600) };
  const kinds = new Map([
    [files.notFound.oid, { kind: '404', file: files.notFound }],
    [files.forbidden.oid, { kind: '403', file: files.forbidden }],
    [files.redirected.oid, { kind: 'r3', file: files.redirected }],
    [files.tooMany.oid, { kind: 'r4', file: files.tooMany }],
    [files.metadata.oid, { kind: 'meta', file: files.metadata }],
  ]);
  const work = path.join(g.dir, 'work-lfs');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'pointers', Object.fromEntries(Object.entries(files).map(([name, f]) => [`${name}.bin`, f.pointer])));
  await g.ok(['clone', '-q', '--mirror', work, path.join(base, 'src.git')]);
  const daemon = await startGitDaemon(t, base);
  const lfs = await lfsServer(t, kinds);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-lfsdl-'));
  const database = await createTestDatabase(dir);
  const node = await startServeProcess({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    IMPORT_ALLOWED_HOSTS: 'loopback',
  });
  t.teardown(async () => {
    node.child.kill('SIGKILL');
    await node.exited;
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let exited = false;
  void node.exited.then(() => (exited = true));
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(node.url + p, {
      method,
      headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const created = await api('POST', '/api/v1/repos/import', { source_url: daemon.url('src'), target_org: 'demo', name: 'copy', lfs_url: lfs.url });
  t.equal(created.status, 202, JSON.stringify(created.body));
  let job: any;
  await waitFor(
    async () => {
      if (exited) return true;
      job = (await api('GET', `/api/v1/repos/import/${created.body.id}`).catch(() => ({ body: null }))).body;
      return Boolean(job?.finished_at);
    },
    { timeoutMs: 60_000, intervalMs: 100, what: 'the import to finish' },
  ).catch(() => {}); // the assertions below say what state it stopped in
  t.notOk(exited, 'wharf serve is still running');
  t.equal(job?.status, 'succeeded', JSON.stringify(job));
  t.equal(job?.repository?.lfs_objects, 1, 'the object behind 3 redirects is stored');
  const missing = new Map<string, string>((job?.repository?.missing_lfs_objects ?? []).map((m: any) => [m.oid, m.error]));
  t.same(
    [...missing.keys()].sort(),
    [files.notFound.oid, files.forbidden.oid, files.tooMany.oid, files.metadata.oid].sort(),
    'every other object is listed missing',
  );
  t.match(missing.get(files.notFound.oid), /404/);
  t.match(missing.get(files.forbidden.oid), /403/);
  t.match(missing.get(files.tooMany.oid), /redirect/);
  t.match(missing.get(files.metadata.oid), /host policy|blocked|not allowed/i);
  t.equal(lfs.hits.filter((h) => h.endsWith(files.tooMany.oid)).length, 4, 'a 4th redirect is not followed');
  const res = await fetch(`${node.url}/demo/copy.git/info/lfs/objects/${files.redirected.oid}`, {
    headers: { authorization: `Basic ${Buffer.from(`x:${node.token}`).toString('base64')}` },
  });
  t.same(Buffer.from(await res.arrayBuffer()), files.redirected.content, 'the redirected object is served afterwards');
});
