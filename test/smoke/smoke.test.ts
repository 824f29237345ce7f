// The real thing, briefly, as a user meets it: a fresh `wharf serve`, a `git push` that
// creates a repository and reaches a webhook receiver, an import from a git server, a
// restart that keeps all of it. `.ci/run` runs this file alone on Node 22 (the whole suite
// runs on Node 24), on both databases.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess, type ServeProcess } from '../helpers/serveProcess.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../delivery/receiver.ts';

t.test(`smoke on Node ${process.versions.node}: push with a delivery, an import, a restart`, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-smoke-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = serveEnv(dir, database.url, { IMPORT_ALLOWED_HOSTS: 'loopback' });
  let node: ServeProcess = await startServeProcess(env, { t, timeoutMs: 60_000 });
  const token = node.token!;
  t.match(token, /^wharf_/, 'the first start printed the admin token');
  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${node.url}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const gitUrl = (name: string) => {
    const url = new URL(`${node.url}/demo/${name}.git`);
    url.username = 'x';
    url.password = token;
    return url.toString();
  };

  // A webhook of the organization hears every push to its repositories.
  const receiver = await startReceiver(t);
  const hook = await api('POST', '/orgs/demo/webhooks', { url: `${receiver.url}/hook`, events: ['push'] });
  t.equal(hook.status, 201);
  receiver.secrets.set(hook.body.id, hook.body.secret);

  // A first push creates demo/app and its push event reaches the receiver, signed.
  const g = gitClient(t);
  const work = path.join(g.dir, 'app');
  await g.ok(['init', '-q', work]);
  const first = await g.commit(work, 'first');
  await g.ok(['push', '-q', gitUrl('app'), 'main'], { cwd: work });
  const pushed = await waitFor(() => receiver.received.find((r) => r.event === 'push'), { timeoutMs: 30_000, what: 'the push delivery' });
  t.ok(pushed.signatureOk, 'signed with the webhook secret');
  t.equal(JSON.parse(pushed.body.toString()).after, first, 'the delivery names the pushed commit');

  // An import from a git server brings every ref over.
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await g.ok(['clone', '-q', '--bare', work, path.join(base, 'source.git')]);
  await g.ok(['tag', 'v1', first], { cwd: path.join(base, 'source.git') });
  const daemon = await startGitDaemon(t, base);
  const job = await api('POST', '/repos/import', { source_url: daemon.url('source'), target_org: 'demo', name: 'copy' });
  t.equal(job.status, 202);
  const done = await waitFor(
    async () => {
      const now = await api('GET', `/repos/import/${job.body.id}`);
      return now.body.status === 'succeeded' || now.body.status === 'failed' ? now.body : null;
    },
    { timeoutMs: 60_000, what: 'the import' },
  );
  t.equal(done.status, 'succeeded', done.error);
  const source = refList(await g.ok(['ls-remote', daemon.url('source')]));
  t.same(refList(await g.ok(['ls-remote', gitUrl('copy')])), source, 'the import has every ref of the source');

  // A restart keeps everything: the repositories answer and the next push is delivered.
  t.equal(await node.stop(), 0, 'SIGTERM stops it with exit 0');
  t.notMatch(node.errors(), /Assertion failed|Aborted|Segmentation/, 'nothing aborted');
  node = await startServeProcess(env, { t, timeoutMs: 60_000 });
  t.equal(node.token, undefined, 'a restart prints no new token');
  t.same(refList(await g.ok(['ls-remote', gitUrl('copy')])), source, 'the import is still there');
  const second = await g.commit(work, 'second');
  await g.ok(['push', '-q', gitUrl('app'), 'main'], { cwd: work });
  const again = await waitFor(() => receiver.received.find((r) => r.event === 'push' && JSON.parse(r.body.toString()).after === second), {
    timeoutMs: 30_000,
    what: 'the push delivery after the restart',
  });
  t.ok(again.signatureOk);
  t.equal(await node.stop(), 0);
});
