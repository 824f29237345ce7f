import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';

/** Starts `wharf serve` as a real child process (see startServeProcess). */
const serve = (env: Record<string, string>) => startServeProcess(env);

t.test('SIGKILL in the middle of a storm of deliveries, then restart: every delivery ends in success, none lost', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-crash-'));
  const database = await createTestDatabase(dir);
  const env = serveEnv(dir, database.url, { WEBHOOK_TIMEOUT: '2s', WEBHOOK_CONCURRENCY: '8', WEBHOOK_RETRY_SCHEDULE: '0s,500ms,1s,2s' });
  let current: ChildProcess | undefined;
  t.teardown(async () => {
    current?.kill('SIGKILL');
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // The receiver is slow (80 ms an answer), so with 8 in flight the storm lasts seconds.
  const rx = await startReceiver(t, () => ({ status: 200, delayMs: 80 }));
  const first = await serve(env);
  current = first.child;
  const api = (url: string, method: string, p: string, body?: unknown) =>
    fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
  t.equal((await api(first.url, 'POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
  const hook = await api(first.url, 'POST', '/api/v1/repos/demo/app/webhooks', { url: `${rx.url}/storm`, events: ['*'] });
  t.equal(hook.status, 201);
  rx.secrets.set(hook.body.id, hook.body.secret);

  const guids = new Set<string>();
  for (let i = 0; i < 400; i += 25) {
    const batch = await Promise.all(Array.from({ length: 25 }, () => api(first.url, 'POST', `/api/v1/webhooks/${hook.body.id}/ping`)));
    for (const b of batch) if (b.status === 202) guids.add(b.body.guid);
  }
  t.equal(guids.size, 400, '400 pings queued');
  await waitFor(() => new Set(rx.received.map((r) => r.guid)).size >= 150, { what: 'the storm to be under way', timeoutMs: 60_000 });
  first.child.kill('SIGKILL');
  await first.exited;
  const atKill = new Set(rx.received.map((r) => r.guid)).size;
  t.ok(atKill < guids.size + 1, `killed with ${atKill} of ${guids.size + 1} received`);

  const second = await serve(env);
  current = second.child;
  const done = await waitFor(
    async () => {
      const res = await api(second.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries?limit=1`);
      return res.body?.successful === guids.size + 1 && res.body.pending === 0 ? res.body : null;
    },
    { what: 'every delivery to succeed after the restart', timeoutMs: 90_000 },
  );
  t.match(done, { total: guids.size + 1, successful: guids.size + 1, failed: 0, pending: 0 });
  const distinct = new Set(rx.received.map((r) => r.guid));
  for (const g of guids) if (!distinct.has(g)) t.fail(`delivery ${g} never arrived`);
  t.equal(distinct.size, guids.size + 1, 'every delivery arrived (the creation ping too)');
  t.ok(
    rx.received.every((r) => r.signatureOk),
    'all signed',
  );
  // A repeat is an attempt number sent twice for one guid: what the kill cut off. (An
  // attempt that timed out on a busy machine is retried under the next number: not a repeat.)
  const pairs = new Set(rx.received.map((r) => `${r.guid}:${r.attempt}`));
  const repeats = rx.received.length - pairs.size;
  t.ok(repeats <= 8, `attempts repeated (at-least-once) stay within what was in flight at the kill (WEBHOOK_CONCURRENCY 8): ${repeats}`);
  t.comment(`received ${rx.received.length} requests for ${distinct.size} deliveries: ${repeats} repeated attempts, ${atKill} had arrived at the kill`);
  second.child.kill('SIGTERM');
  await second.exited;
});
