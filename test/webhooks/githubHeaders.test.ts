import path from 'node:path';
import t from 'tap';
import { Webhooks } from '@octokit/webhooks';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver, type Received } from '../delivery/receiver.ts';
import { buildWebhook } from '../delivery/build.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';

const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback' };
const GITHUB = ['x-github-event', 'x-github-delivery', 'x-github-hook-id', 'x-hub-signature-256'];

t.test('header_style "github": a receiver written for GitHub (@octokit/webhooks) verifies real deliveries unchanged', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const secret = 'github-style-secret';
  const hook = await buildWebhook(w, repo, rx, { events: ['push'], secret, header_style: 'github' }, undefined);
  t.equal(hook.header_style, 'github', 'the record shows the style');
  const plain = await buildWebhook(w, repo, { url: `${rx.url}/plain`, secrets: rx.secrets }, { events: ['push'] });
  t.equal(plain.header_style, 'wharf', 'wharf by default');

  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'first');
  await g.ok(['push', '-q', repoUrl(w, 'acme/app', w.adminToken), 'main'], { cwd: work });
  await w.pushesRecorded();
  await deliveriesSettled(w.running.services.db, { count: 4 });
  // A ping through the API too (a redelivery is checked by the bulk redelivery's own test).
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`)).status, 202);
  await waitFor(() => rx.received.filter((r) => r.hookId === hook.id).length === 3, { what: 'two pings and a push' });

  const octokit = new Webhooks({ secret });
  const seen: { name: string; id: string }[] = [];
  octokit.on('ping', (e) => void seen.push({ name: e.name, id: e.id }));
  octokit.on('push', (e) => void seen.push({ name: e.name, id: e.id }));
  const github = rx.received.filter((r) => r.hookId === hook.id);
  t.same(github.map((r) => r.event).sort(), ['ping', 'ping', 'push']);
  for (const r of github) {
    const h = r.headers;
    t.equal(h['x-github-event'], h['x-service-event']);
    t.equal(h['x-github-delivery'], h['x-service-delivery']);
    t.equal(h['x-github-hook-id'], String(hook.id));
    t.equal(h['x-hub-signature-256'], h['x-service-signature']);
    t.equal(await octokit.verify(r.body.toString('utf8'), String(h['x-hub-signature-256'])), true, `${r.event}: verify()`);
    await octokit.verifyAndReceive({
      id: String(h['x-github-delivery']),
      name: String(h['x-github-event']) as 'push',
      payload: r.body.toString('utf8'),
      signature: String(h['x-hub-signature-256']),
    });
  }
  t.same(
    seen.sort((a, b) => a.id.localeCompare(b.id)),
    github.map((r) => ({ name: r.event, id: r.guid })).sort((a, b) => a.id.localeCompare(b.id)),
    'verifyAndReceive dispatched each to its handler, by X-GitHub-Event and X-GitHub-Delivery',
  );
  await t.rejects(
    octokit.verifyAndReceive({
      id: 'x',
      name: 'push',
      payload: github[0].body.toString('utf8') + ' ',
      signature: String(github[0].headers['x-hub-signature-256']),
    }),
    'a changed body does not verify',
  );

  const wharfStyle = rx.received.filter((r: Received) => r.hookId === plain.id);
  t.same(wharfStyle.map((r) => r.event).sort(), ['ping', 'push']);
  for (const r of wharfStyle)
    t.same(
      GITHUB.filter((name) => name in r.headers),
      [],
      `${r.event}: no GitHub headers on a wharf-style webhook`,
    );
});

t.test('header_style: PATCH switches it, bad values are 422', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const hook = await buildWebhook(w, repo, rx, { events: ['push'] });
  await waitFor(() => rx.received.length === 1, { what: 'the creation ping' });
  t.notOk('x-github-event' in rx.received[0].headers);
  const one = `/api/v1/repos/acme/app/webhooks/${hook.id}`;
  const patched = await w.api('PATCH', one, { body: { header_style: 'github' } });
  t.same([patched.status, patched.body.header_style, patched.body.events], [200, 'github', ['push']], 'switched, the rest kept');
  t.equal((await w.api('GET', one)).body.header_style, 'github');
  await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`);
  await waitFor(() => rx.received.length === 2, { what: 'the second ping' });
  t.equal(rx.received[1].headers['x-github-event'], 'ping', 'the next delivery carries the GitHub headers');
  t.equal(rx.received[1].headers['x-hub-signature-256'], rx.received[1].headers['x-service-signature']);
  t.equal((await w.api('PATCH', one, { body: { header_style: 'wharf' } })).body.header_style, 'wharf');
  await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`);
  await waitFor(() => rx.received.length === 3, { what: 'the third ping' });
  t.same(
    GITHUB.filter((name) => name in rx.received[2].headers),
    [],
    'switched back: none',
  );
  for (const bad of ['GitHub', 'gitlab', '', null, 1]) {
    const res = await w.api('PATCH', one, { body: { header_style: bad } });
    t.equal(res.status, 422, `PATCH ${JSON.stringify(bad)}`);
    t.equal(res.body.error.details[0].path, '/header_style');
    const created = await w.api('POST', '/api/v1/repos/acme/app/webhooks', { body: { url: `${rx.url}/x`, header_style: bad } });
    t.equal(created.status, 422, `POST ${JSON.stringify(bad)}`);
  }
});
