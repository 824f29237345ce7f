import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { gitClient } from '../helpers/git.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';

t.test(
  'a branch filter that backtracks in a regular expression, and a push of a branch that makes it: the node keeps answering and the matching branch is delivered',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-filter-'));
    const database = await createTestDatabase(dir);
    let child: ChildProcess | undefined;
    t.teardown(async () => {
      child?.kill('SIGKILL');
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const node = await startServeProcess(serveEnv(dir, database.url), 60_000);
    child = node.child;
    const api = (method: string, p: string, body?: unknown) =>
      fetch(node.url + p, {
        method,
        headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
    t.equal((await api('POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
    const rx = await startReceiver(t);
    const filter = '*a*a*a*a*a*a*a*a*a*a*a*a*b';
    const hook = await api('POST', '/api/v1/repos/demo/app/webhooks', { url: `${rx.url}/push`, events: ['push'], branch_filter: filter });
    t.equal(hook.status, 201, 'the filter is accepted');
    rx.secrets.set(hook.body.id, hook.body.secret);

    const g = gitClient(t);
    const work = path.join(g.dir, 'work');
    await g.ok(['init', '-q', work]);
    const head = await g.commit(work, 'first');
    const stuck = `${'a'.repeat(60)}c`;
    const matching = `${'a'.repeat(60)}b`;
    const remote = `${node.url.replace('http://', `http://x:${node.token}@`)}/demo/app.git`;
    const push = await g.run(['push', '-q', remote, `main:refs/heads/${stuck}`, `main:refs/heads/${matching}`], { cwd: work });
    t.equal(push.code, 0, `push accepted: ${push.stderr}`);
    // The push's answer ends once its record is committed; recording it starts at once.
    // Health is asked all along, until the matching branch's delivery has arrived.
    let unanswered = 0;
    const delivered = await waitFor(
      async () => {
        const health = await fetch(`${node.url}/api/v1/health`, { signal: AbortSignal.timeout(5_000) }).then(
          (r) => r.status,
          () => 0,
        );
        if (health !== 200) unanswered += 1;
        return unanswered > 0 ? 'unanswered' : rx.received.find((r) => r.event === 'push');
      },
      { what: 'the push of the matching branch delivered', timeoutMs: 60_000 },
    );
    t.equal(unanswered, 0, '/api/v1/health answered every time while the push was recorded');
    if (delivered === 'unanswered') return;
    const payload = JSON.parse(delivered.body.toString());
    t.equal(payload.ref, `refs/heads/${matching}`);
    t.equal(payload.after, head);
    t.equal((await api('GET', '/api/v1/health')).status, 200, 'and afterwards');
    const pushes = () => rx.received.filter((r) => r.event === 'push').map((r) => JSON.parse(r.body.toString()).ref);
    t.same(pushes(), [`refs/heads/${matching}`], 'the branch the filter does not match is not delivered');
  },
);
