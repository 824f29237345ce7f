import path from 'node:path';
import t from 'tap';
import { startWharf, buildRepo, buildUser } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startReceiver } from './receiver.ts';
import { clockPast, deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { buildWebhook } from './build.ts';
import { insertPushRecord } from '../../src/pushes/records.ts';
import { wake } from '../../src/services.ts';

t.test('a real git push reaches the receiver as signed push deliveries, branch filter honoured', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const mainOnly = await buildWebhook(w, repo, rx, { url: `${rx.url}/main`, branch_filter: 'main' });
  const everything = await buildWebhook(w, repo, rx, { url: `${rx.url}/all`, events: ['*'] });
  await waitFor(() => rx.received.length === 2, { what: 'creation pings' });

  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/app', ann.token)], { cwd: work });
  await g.commit(work, 'first');
  const head = await g.commit(work, 'second');
  await g.ok(['push', '-q', 'origin', 'main'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'feature/x'], { cwd: work });
  const feature = await g.commit(work, 'feature work');
  await g.ok(['push', '-q', 'origin', 'feature/x'], { cwd: work });
  await g.ok(['tag', 'v1.0'], { cwd: work });
  await g.ok(['push', '-q', 'origin', 'v1.0'], { cwd: work });

  await waitFor(() => rx.received.filter((r) => r.event === 'push').length === 4, { what: 'pushes: 1 to main-only, 3 to everything' });
  const pushes = rx.received.filter((r) => r.event === 'push');
  t.ok(
    pushes.every((r) => r.signatureOk && r.standardOk),
    'every push delivery verified (HMAC and Standard Webhooks)',
  );
  const refs = (id: number) => pushes.filter((r) => r.hookId === id).map((r) => JSON.parse(r.body.toString()));
  t.same(
    refs(mainOnly.id).map((p) => [p.ref, p.after]),
    [['refs/heads/main', head]],
    'branch_filter main: only the main push',
  );
  t.same(
    refs(everything.id)
      .map((p) => p.ref)
      .sort(),
    ['refs/heads/feature/x', 'refs/heads/main', 'refs/tags/v1.0'],
  );
  const main = refs(everything.id).find((p) => p.ref === 'refs/heads/main');
  t.equal(main.total_commits, 2);
  t.equal(main.sender.login, 'ann');
  t.equal(refs(everything.id).find((p) => p.ref === 'refs/heads/feature/x').after, feature);
});

t.test('a push goes to the webhooks that existed when it landed, not to one added while it was being recorded', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const before = await buildWebhook(w, repo, rx, { url: `${rx.url}/before` });
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  const sha = await g.commit(work, 'first');
  // The push lands (git writes the ref, the route its push record) at `landed`; a webhook
  // is added after that, before the recorder gets to the record.
  await g.ok(['push', '-q', `file://${path.join(w.config.reposDir, 'acme', 'app.git')}`, 'main'], { cwd: work });
  await clockPast(Date.now());
  const landed = Date.now();
  await clockPast(landed);
  const after = await buildWebhook(w, repo, rx, { url: `${rx.url}/after` });
  await insertPushRecord(w.running.services.db, repo.id, ann.user.id, {
    updates: [{ before: '0'.repeat(40), after: sha, ref: 'refs/heads/main' }],
    refsAfter: new Map([['refs/heads/main', sha]]),
    landedAt: landed,
  });
  wake(w.running.services).pushRecords();
  await w.pushesRecorded();
  await waitFor(() => rx.received.some((r) => r.event === 'push'), { what: 'the push delivery' });
  // Every push delivery is written with the push's events (recorded above); once all are settled none is sent again: the receiver's count is final.
  await deliveriesSettled(w.running.services.db, { event: 'push', count: 1 });
  const pushes = rx.received.filter((r) => r.event === 'push');
  t.same(
    pushes.map((r) => r.hookId),
    [before.id],
    'only the webhook that existed when the push landed',
  );
  t.ok(
    rx.received.some((r) => r.event === 'ping' && r.hookId === after.id),
    'the later webhook is alive (it got its ping)',
  );
});
