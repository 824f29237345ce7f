import t from 'tap';
import path from 'node:path';
import { startWharf, buildRepo, buildUser, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook } from '../delivery/build.ts';

const LOOPBACK = { WEBHOOK_ALLOWED_HOSTS: 'loopback' };

/** Every event row of a repository as stored, oldest first: the payload column read directly. */
async function storedEvents(w: TestWharf, repoId: number) {
  await w.pushesRecorded();
  return (await w.running.services.db('events').where('repository_id', repoId).orderBy('id').select('id', 'type', 'ref', 'payload')).map((r: any) => ({
    ...r,
    id: Number(r.id),
  }));
}

async function pushSetup(t: Parameters<typeof startWharf>[0]) {
  const w = await startWharf(t, { env: LOOPBACK });
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  return { w, ann, g, work };
}

t.test('an event no webhook receives is stored without its payload; one a webhook receives keeps the bytes it sent', async (t) => {
  const { w, ann, g, work } = await pushSetup(t);
  const bare = await buildRepo(w, 'acme', 'bare');
  const picky = await buildRepo(w, 'acme', 'picky');
  const watched = await buildRepo(w, 'acme', 'watched');
  const rx = await startReceiver(t);
  // picky's webhooks never want a push to main: another type, a branch filter, or inactive.
  await buildWebhook(w, picky, rx, { events: ['issue'] });
  await buildWebhook(w, picky, rx, { url: `${rx.url}/release-only`, events: ['push'], branch_filter: 'release/*' });
  await buildWebhook(w, picky, rx, { url: `${rx.url}/off`, events: ['*'], active: false });
  await buildWebhook(w, watched, rx, { events: ['push'] });
  await waitFor(() => rx.received.filter((r) => r.event === 'ping').length === 3, { what: 'the creation pings' });

  await g.commit(work, 'one');
  for (const repo of [bare, picky, watched]) await g.ok(['push', '-q', repoUrl(w, `acme/${repo.name}`, ann.token), 'main'], { cwd: work });
  const issue = await w.api('POST', '/api/v1/repos/acme/bare/issues', { body: { title: 'Nobody listens' } });
  t.equal(issue.status, 201);

  const unheard = await storedEvents(w, bare.id);
  t.same(
    unheard.map((e) => [e.type, e.payload]),
    [
      ['push', null],
      ['issue', null],
    ],
    'no webhook: the events are kept without payloads',
  );
  t.same(
    (await storedEvents(w, picky.id)).map((e) => [e.type, e.ref, e.payload]),
    [['push', 'refs/heads/main', null]],
    'webhooks that do not want it: no payload either',
  );
  const [heard] = await storedEvents(w, watched.id);
  t.ok(heard.payload, 'a received event keeps its payload');
  const push = await waitFor(() => rx.received.find((r) => r.event === 'push'), { what: 'the push delivery' });
  t.equal(push.body.toString('utf8'), heard.payload, 'the delivery sent exactly the stored bytes');
  t.equal(JSON.parse(heard.payload).commits.length, 1);
  t.equal(rx.received.filter((r) => r.event === 'push').length, 1, 'only the watched repository delivered a push');
});

t.test('a webhook added after an event does not receive it, so the event still needs no payload', async (t) => {
  const { w, ann, g, work } = await pushSetup(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await g.commit(work, 'before the webhook');
  await g.ok(['push', '-q', repoUrl(w, 'acme/app', ann.token), 'main'], { cwd: work });
  const [before] = await storedEvents(w, repo.id);
  t.equal(before.payload, null);

  const rx = await startReceiver(t);
  const hook = await buildWebhook(w, repo, rx, { events: ['push'] });
  await g.commit(work, 'after the webhook');
  await g.ok(['push', '-q', repoUrl(w, 'acme/app', ann.token), 'main'], { cwd: work });
  const push = await waitFor(() => rx.received.find((r) => r.event === 'push'), { what: 'the second push delivered' });
  const events = await storedEvents(w, repo.id);
  t.same(
    events.map((e) => e.payload === null),
    [true, false],
    'the first push stays without payload, the second has one',
  );
  t.equal(push.body.toString('utf8'), events[1].payload);
  t.match(JSON.parse(events[1].payload).commits[0].message, /^after the webhook/);
  const deliveries = await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`);
  t.same(deliveries.body.deliveries.map((d: any) => d.event).sort(), ['ping', 'push'], 'the earlier push was never queued for it');
});
