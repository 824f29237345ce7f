import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serveProcess.ts';
import { gitClient, refList } from '../helpers/git.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { deliveriesSettled, pushesRecorded, waitFor } from '../helpers/wait.ts';
import { connect } from '../../src/db/connect.ts';
import { generateShapedRepo } from '../git/bigRepo.ts';

/** Starts one node of the push cluster: a real `wharf serve` (see startServeProcess). */
const startPushNode = (env: Record<string, string>) => startServeProcess(env, 60_000);
type PushNode = ServeProcess;

t.test(
  'three nodes on one Postgres and one REPOS_DIR: the node a big push landed on dies as git push returns; the others record and deliver every event',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-cluster-push-'));
    const database = await createTestDatabase(dir);
    t.teardown(async () => {
      for (const n of nodes) n.child.kill('SIGKILL');
      await Promise.all(nodes.map((n) => n.exited));
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const nodes: PushNode[] = [];
    if (database.dialect !== 'postgres') {
      t.comment('skipped: several processes share one database only on Postgres (SQLite is one file per node); set TEST_DATABASE_URL');
      t.pass('skipped on SQLite');
      return;
    }
    // Every node of one database is given the same key (each has its own DATA_DIR, so none
    // could read a key file another generated).
    const secretKey = randomBytes(32).toString('hex');
    const env = (name: string) => ({
      SECRET_KEY: secretKey,
      DATA_DIR: path.join(dir, `data-${name}`),
      REPOS_DIR: path.join(dir, 'repos'),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      WEBHOOK_ALLOWED_HOSTS: 'loopback',
      WEBHOOK_RETRY_SCHEDULE: '0s,500ms,1s,2s',
      PUSH_LEASE: '3s',
    });
    const rx = await startReceiver(t);
    const a = await startPushNode(env('a'));
    nodes.push(a);
    const token = a.token!;
    const api = (url: string, method: string, p: string, body?: unknown) =>
      fetch(url + p, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
    t.equal((await api(a.url, 'POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
    const hook = await api(a.url, 'POST', '/api/v1/repos/demo/app/webhooks', { url: `${rx.url}/push`, events: ['push'] });
    t.equal(hook.status, 201);
    rx.secrets.set(hook.body.id, hook.body.secret);
    const [b, c] = await Promise.all([startPushNode(env('b')), startPushNode(env('c'))]);
    nodes.push(b, c);

    const g = gitClient(t);
    const src = path.join(g.dir, 'src.git');
    const branches = 1000;
    await generateShapedRepo(src, { mainCommits: 300, branches, tags: 0, pulls: 0 });
    const gitUrl = (node: PushNode) => `${node.url.replace('http://', `http://x:${token}@`)}/demo/app.git`;
    const push = await g.run(['push', '--mirror', gitUrl(a)], { cwd: src });
    a.child.kill('SIGKILL');
    t.equal(push.code, 0, 'the push to node A is accepted');
    await a.exited;

    const expected = branches + 1;
    const pushes = () => rx.received.filter((r) => r.event === 'push');
    await waitFor(() => new Set(pushes().map((r) => r.guid)).size >= expected, { what: 'every push event delivered by B or C', timeoutMs: 180_000 });
    // Every push record recorded and every push delivery settled: no event can be raised or sent any more, so the receiver's count is final.
    const db = connect(database.url);
    try {
      await pushesRecorded(db, { timeoutMs: 60_000 });
      await deliveriesSettled(db, { webhookId: hook.body.id, event: 'push', count: expected }, { timeoutMs: 60_000 });
    } finally {
      await db.destroy();
    }
    const byGuid = new Map(pushes().map((r) => [r.guid, JSON.parse(r.body.toString())]));
    t.equal(byGuid.size, expected, 'one event per branch');
    const local = refList(await g.ok(['show-ref'], { cwd: src }));
    t.same([...byGuid.values()].map((p) => p.ref).sort(), local.map((l) => l.split(' ')[1]).sort(), 'every branch raised exactly one event');
    t.ok(
      pushes().every((r) => r.signatureOk),
      'all signed',
    );
    for (const [name, node] of [
      ['B', b],
      ['C', c],
    ] as const) {
      t.same(refList(await g.ok(['ls-remote', gitUrl(node)])), local, `node ${name} serves every pushed ref`);
    }
    const left = await api(b.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries?limit=1`);
    t.match(left.body, { pending: 0 }, 'nothing left pending');
  },
);
