import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { gitClient } from '../helpers/git.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { deliveriesSettled, pushesRecorded, waitFor } from '../helpers/wait.ts';
import { connect } from '../../src/db/connect.ts';
import { generateShapedRepo } from './bigRepo.ts';

const SHAPE = { mainCommits: 3000, branches: 200, tags: 300, pulls: 1000 };

/** Starts `wharf serve` as a real child process (see startServeProcess). */
const serve = (env: Record<string, string>) => startServeProcess(env, 60_000);

t.test('SIGKILL of wharf serve while a big push is being recorded, then a restart: every event is raised once and delivered', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-push-crash-'));
  const database = await createTestDatabase(dir);
  const env = serveEnv(dir, database.url, { WEBHOOK_RETRY_SCHEDULE: '0s,500ms,1s,2s' });
  let current: ChildProcess | undefined;
  t.teardown(async () => {
    current?.kill('SIGKILL');
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // Slow answers keep the first deliveries in flight while the rest is recorded.
  const rx = await startReceiver(t, () => ({ status: 200, delayMs: 20 }));
  const first = await serve(env);
  current = first.child;
  const token = first.token!;
  const api = (url: string, method: string, p: string, body?: unknown) =>
    fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
  t.equal((await api(first.url, 'POST', '/api/v1/orgs/demo/repos', { name: 'big' })).status, 201);
  const hook = await api(first.url, 'POST', '/api/v1/repos/demo/big/webhooks', { url: `${rx.url}/push`, events: ['push'] });
  rx.secrets.set(hook.body.id, hook.body.secret);
  const g = gitClient(t);
  const src = path.join(g.dir, 'src.git');
  await generateShapedRepo(src, SHAPE);
  const expected = 1 + SHAPE.branches + SHAPE.tags;

  const push = await g.run(['push', '-q', '--mirror', `${first.url.replace('http://', `http://x:${token}@`)}/demo/big.git`], { cwd: src });
  t.equal(push.code, 0, 'mirror push accepted');
  const pushes = () => rx.received.filter((r) => r.event === 'push');
  await waitFor(() => pushes().length > 0, { what: 'the first push deliveries', timeoutMs: 120_000 });
  first.child.kill('SIGKILL');
  await first.exited;
  const db = connect(database.url);
  const atKill = Number(((await db('events').where('type', 'push').count({ n: '*' })) as any[])[0].n);
  t.comment(`killed with ${atKill} of ${expected} events recorded, ${new Set(pushes().map((r) => r.guid)).size} delivered`);

  const second = await serve(env);
  current = second.child;
  await waitFor(() => new Set(pushes().map((r) => r.guid)).size >= expected, { what: 'every push event delivered after the restart', timeoutMs: 180_000 });
  // Every push record recorded and every push delivery settled: no event can be raised or sent any more, so the counts below are final.
  await pushesRecorded(db, { timeoutMs: 60_000 });
  await deliveriesSettled(db, { webhookId: hook.body.id, event: 'push', count: expected }, { timeoutMs: 60_000 });
  const rows = await db('events').where('type', 'push').select('ref');
  await db.destroy();
  t.equal(rows.length, expected, 'each branch and tag raised one event, none twice across the crash');
  t.equal(new Set(rows.map((r: any) => r.ref)).size, expected, 'no ref repeated');
  const byGuid = new Map(pushes().map((r) => [r.guid, JSON.parse(r.body.toString())]));
  t.equal(byGuid.size, expected, 'every event delivered');
  const listed = [...byGuid.values()].flatMap((p) => p.commits.map((c: any) => c.id));
  t.equal(new Set(listed).size, listed.length, 'each commit listed at most once across chunks and the restart');
  t.equal((await api(second.url, 'GET', '/api/v1/health')).status, 200, 'the node is up');
  second.child.kill('SIGTERM');
  await second.exited;
});
