import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Test } from 'tap';
import { startWharf, buildUser, buildRepo, type TestWharf } from '../helpers/wharf.ts';
import { startReceiver, type Received } from '../delivery/receiver.ts';
import { buildWebhook } from '../delivery/build.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { PAYLOAD_SCHEMAS } from '../../src/domain/payloads/schemas/index.ts';
import { createOrg } from '../../src/domain/accounts.ts';

// Organization webhooks (SPEC §5.4) and the `repository` and `import` events (SPEC §6),
// through a real server, a real receiver, real git pushes and a real git daemon source.

const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback', IMPORT_ALLOWED_HOSTS: 'loopback' };
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
const validators = Object.fromEntries(Object.entries(PAYLOAD_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));

const json = (r: Received) => JSON.parse(r.body.toString('utf8'));

/** Checks each received body against its event's payload schema and its signature. */
function checkContract(t: Test, received: Received[]) {
  for (const r of received) {
    const validate = validators[r.event];
    t.ok(validate?.(json(r)), `${r.event} payload matches its schema ${JSON.stringify(validate?.errors ?? null)}`);
    t.ok(r.signatureOk, `${r.event} delivery is signed`);
  }
}

async function setup(t: Test) {
  const w = await startWharf(t, { env });
  const db = w.running.services.db;
  await createOrg(db, 'acme');
  await createOrg(db, 'other');
  const owner = await buildUser(w, 'olive', { org: 'acme', role: 'owner' });
  const member = await buildUser(w, 'mel', { org: 'acme', role: 'member' });
  const stranger = await buildUser(w, 'otto', { org: 'other', role: 'owner' });
  const rx = await startReceiver(t);
  const res = await w.api('POST', '/api/v1/orgs/acme/webhooks', { token: owner.token, body: { url: `${rx.url}/org`, events: ['*'], secret: 'org-secret' } });
  t.equal(res.status, 201, 'an owner creates an organization webhook');
  rx.secrets.set(res.body.id, 'org-secret');
  return { w, db, owner, member, stranger, rx, hook: res.body };
}

const at = (rx: { received: Received[] }, hookId: number) => rx.received.filter((r) => r.hookId === hookId);

t.test('organization webhook: access rules, the same record rules, org-only events refused on repository webhooks', async (t) => {
  const { w, owner, member, stranger, rx, hook } = await setup(t);
  t.equal(hook.has_secret, true);
  t.notOk('secret' in hook, 'a secret that was sent is not returned');
  t.match(hook.ping_url, new RegExp(`/api/v1/webhooks/${hook.id}/ping$`));
  await waitFor(() => at(rx, hook.id).some((r) => r.event === 'ping'));
  const ping = json(at(rx, hook.id).find((r) => r.event === 'ping')!);
  t.equal(ping.repository, null, 'an organization ping names no repository');
  t.same(ping.organization, { login: 'acme', url: `${w.config.baseUrl}/acme` });

  const generated = await w.api('POST', '/api/v1/orgs/acme/webhooks', { token: owner.token, body: { url: `${rx.url}/gen`, events: ['repository', 'import'] } });
  t.equal(generated.status, 201);
  t.match(generated.body.secret, /^whsec_/, 'a generated secret is returned once');
  t.notOk('secret' in (await w.api('GET', `/api/v1/orgs/acme/webhooks/${generated.body.id}`, { token: owner.token })).body);

  t.equal((await w.api('POST', '/api/v1/orgs/acme/webhooks', { token: owner.token, body: { url: `${rx.url}/org` } })).status, 422, 'same URL twice: 422');
  t.equal((await w.api('GET', '/api/v1/orgs/acme/webhooks', { token: member.token })).status, 403, 'a member: 403');
  t.equal((await w.api('GET', '/api/v1/orgs/acme/webhooks', { token: stranger.token })).status, 404, 'an owner of another organization: 404');
  t.equal((await w.api('GET', `/api/v1/orgs/acme/webhooks/${hook.id}`, { token: stranger.token })).status, 404);
  t.equal((await w.api('GET', `/api/v1/orgs/other/webhooks/${hook.id}`, { token: stranger.token })).status, 404, 'not through another organization');
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`, { token: stranger.token })).status, 404, 'ping: 404 for another organization');
  t.equal((await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: member.token })).status, 403, 'history: 403 for a member');
  const list = await w.api('GET', '/api/v1/orgs/acme/webhooks', { token: owner.token });
  t.same(
    list.body.map((h: any) => h.id),
    [hook.id, generated.body.id],
  );
  const patched = await w.api('PATCH', `/api/v1/orgs/acme/webhooks/${generated.body.id}`, { token: owner.token, body: { active: false } });
  t.equal(patched.status, 200);
  t.equal(patched.body.active, false);
  t.equal((await w.api('PATCH', `/api/v1/orgs/acme/webhooks/${generated.body.id}`, { token: owner.token, body: { nope: 1 } })).status, 422);
  t.equal((await w.api('POST', `/api/v1/webhooks/${generated.body.id}/ping`, { token: owner.token })).status, 202, 'ping through the shared path');
  t.equal((await w.api('DELETE', `/api/v1/orgs/acme/webhooks/${generated.body.id}`, { token: owner.token })).status, 204);
  t.equal((await w.api('GET', `/api/v1/orgs/acme/webhooks/${generated.body.id}`, { token: owner.token })).status, 404);

  const repo = await buildRepo(w, 'acme', 'plain');
  const refused = await w.api('POST', `/api/v1/repos/acme/plain/webhooks`, { token: owner.token, body: { url: `${rx.url}/r`, events: ['repository'] } });
  t.equal(refused.status, 422, 'a repository webhook with events ["repository"]: 422');
  t.equal(refused.body.error.details[0].path, '/events/0');
  const repoHook = await buildWebhook(w, repo, rx, { events: ['push'] }, owner.token);
  t.equal(
    (await w.api('PATCH', `/api/v1/repos/acme/plain/webhooks/${repoHook.id}`, { token: owner.token, body: { events: ['push', 'import'] } })).status,
    422,
    'nor by PATCH',
  );

  // At most 20 per organization.
  for (let i = 1; i < 20; i++) {
    const r = await w.api('POST', '/api/v1/orgs/acme/webhooks', { token: owner.token, body: { url: `${rx.url}/n${i}`, active: false } });
    t.equal(r.status, 201);
  }
  t.equal(
    (await w.api('POST', '/api/v1/orgs/acme/webhooks', { token: owner.token, body: { url: `${rx.url}/n21`, active: false } })).status,
    422,
    'the 21st: 422',
  );
});

t.test(
  'organization webhook: repositories created by the API, by push to create and by import raise `repository` created and their pushes reach it',
  async (t) => {
    const { w, db, owner, member, stranger, rx, hook } = await setup(t);
    const g = gitClient(t);

    // By the API.
    t.equal((await w.api('POST', '/api/v1/orgs/acme/repos', { token: member.token, body: { name: 'by-api' } })).status, 201);
    // Another organization's repository raises nothing here.
    t.equal((await w.api('POST', '/api/v1/orgs/other/repos', { token: stranger.token, body: { name: 'elsewhere' } })).status, 201);
    const work = path.join(g.dir, 'w');
    await g.ok(['init', '-q', '-b', 'main', work]);
    await g.commit(work, 'first', { 'a.txt': 'a' });
    await g.ok(['push', '-q', repoUrl(w, 'acme/by-api', owner.token), 'main'], { cwd: work });
    await g.ok(['push', '-q', repoUrl(w, 'other/elsewhere', stranger.token), 'main'], { cwd: work });
    // By push to create.
    await g.ok(['push', '-q', repoUrl(w, 'acme/by-push', member.token), 'main'], { cwd: work });
    await w.pushesRecorded();

    // By import from a git daemon, and one that fails.
    const served = path.join(g.dir, 'served');
    fs.mkdirSync(served);
    await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'src.git')]);
    const daemon = await startGitDaemon(t, served);
    const imported = await w.api('POST', '/api/v1/repos/import', {
      token: owner.token,
      body: { source_url: daemon.url('src'), target_org: 'acme', name: 'by-import' },
    });
    t.equal(imported.status, 202);
    const failing = await w.api('POST', '/api/v1/repos/import', {
      token: owner.token,
      body: { source_url: daemon.url('missing'), target_org: 'acme', name: 'never' },
    });
    t.equal(failing.status, 202);
    // A source that accepts and never answers: the job is canceled while it waits.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const stuck = await w.api('POST', '/api/v1/repos/import', {
      token: owner.token,
      body: { source_url: `git://127.0.0.1:${(silent.address() as net.AddressInfo).port}/stuck.git`, target_org: 'acme', name: 'stuck' },
    });
    t.equal(stuck.status, 202);
    t.equal((await w.api('DELETE', `/api/v1/repos/import/${stuck.body.id}`, { token: owner.token })).status, 200);
    await waitFor(async () => (await db('import_jobs').whereNull('finished_at').count({ n: '*' }))[0].n == 0, { timeoutMs: 60_000 });
    await g.commit(work, 'second', { 'b.txt': 'b' });
    await g.ok(['push', '-q', repoUrl(w, 'acme/by-import', owner.token), 'main'], { cwd: work });
    await w.pushesRecorded();

    await deliveriesSettled(db, { webhookId: hook.id });
    const got = at(rx, hook.id);
    checkContract(t, got);
    const created = got.filter((r) => r.event === 'repository').map(json);
    t.same(created.map((p) => [p.action, p.repository.full_name]).sort(), [
      ['created', 'acme/by-api'],
      ['created', 'acme/by-import'],
      ['created', 'acme/by-push'],
    ]);
    t.equal(created.find((p) => p.repository.name === 'by-push').sender.login, 'mel', 'push to create: its pusher is the sender');
    const pushes = got.filter((r) => r.event === 'push').map(json);
    t.same(pushes.map((p) => p.repository.full_name).sort(), ['acme/by-api', 'acme/by-import', 'acme/by-push']);
    for (const p of [...created, ...pushes]) t.equal(p.organization.login, 'acme', 'organization.login');
    const imports = got.filter((r) => r.event === 'import').map(json);
    const ok = imports.find((p) => p.action === 'succeeded');
    const bad = imports.find((p) => p.action === 'failed');
    t.equal(imports.length, 3);
    const canceled = imports.find((p) => p.action === 'canceled');
    t.same(canceled.import, { id: stuck.body.id, source_url: stuck.body.source_url, status: 'canceled', error: null, mirror: false });
    t.equal(canceled.repository, null);
    t.equal(ok.import.id, imported.body.id);
    t.same(ok.import, { id: imported.body.id, source_url: daemon.url('src'), status: 'succeeded', error: null, mirror: false });
    t.equal(ok.repository.full_name, 'acme/by-import');
    t.equal(ok.sender.login, 'olive');
    t.equal(bad.import.id, failing.body.id);
    t.equal(bad.repository, null);
    t.type(bad.import.error, 'string');
    t.notOk(
      got.some((r) => r.body.toString().includes('elsewhere')),
      "another organization's repository raises nothing here",
    );
  },
);

t.test('one event to a repository webhook and an organization webhook: two deliveries; DELETE of a repository; cutover', async (t) => {
  const { w, db, owner, member, rx, hook } = await setup(t);
  const repo = await buildRepo(w, 'acme', 'shared');
  const repoHook = await buildWebhook(w, repo, rx, { events: ['issue'] }, owner.token);
  const issue = await w.api('POST', '/api/v1/repos/acme/shared/issues', { token: owner.token, body: { title: 'both' } });
  t.equal(issue.status, 201);
  await deliveriesSettled(db);
  const issueDeliveries = await db('deliveries').where('event', 'issue');
  t.same(issueDeliveries.map((d) => Number(d.webhook_id)).sort(), [repoHook.id, hook.id].sort(), 'two deliveries, one per webhook');
  t.equal(new Set(issueDeliveries.map((d) => Number(d.event_id))).size, 1, 'of one event');
  const bodies = rx.received.filter((r) => r.event === 'issue');
  t.equal(bodies.length, 2);
  t.ok(bodies[0].body.equals(bodies[1].body), 'the same bytes to both');
  t.equal(json(bodies[0]).organization.login, 'acme');

  // A pending delivery of the repository's webhook when the repository goes.
  rx.answer(() => ({ status: 500 }));
  await w.api('PATCH', `/api/v1/repos/acme/shared/issues/${issue.body.number}`, { token: owner.token, body: { title: 'pending' } });
  await waitFor(async () => (await db('deliveries').where({ webhook_id: repoHook.id, status: 'pending' }).where('attempts', '>', 0)).length > 0);
  rx.answer(() => ({}));
  t.equal((await w.api('DELETE', '/api/v1/repos/acme/shared', { token: member.token })).status, 403, 'a member may not delete');
  t.equal((await w.api('DELETE', '/api/v1/repos/acme/shared', { token: owner.token })).status, 204);
  t.equal((await w.api('GET', '/api/v1/repos/acme/shared', { token: owner.token })).status, 404);
  t.notOk(fs.existsSync(path.join(w.config.reposDir, 'acme', 'shared.git')), 'its directory is gone');
  t.equal((await db('webhooks').where('id', repoHook.id)).length, 0, 'its webhooks are gone');
  t.equal((await db('deliveries').where('webhook_id', repoHook.id)).length, 0, 'and their pending deliveries');
  await waitFor(() => at(rx, hook.id).some((r) => r.event === 'repository' && json(r).action === 'deleted'));
  const deleted = json(at(rx, hook.id).find((r) => r.event === 'repository' && json(r).action === 'deleted')!);
  t.equal(deleted.repository.full_name, 'acme/shared', 'the repository as it was');
  t.equal(deleted.sender.login, 'olive');

  // Cutover of a pull mirror: import one with mirror: true, then DELETE …/mirror.
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'first', { 'a.txt': 'a' });
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'up.git')]);
  const daemon = await startGitDaemon(t, served);
  const job = await w.api('POST', '/api/v1/repos/import', {
    token: owner.token,
    body: { source_url: daemon.url('up'), target_org: 'acme', name: 'mirrored', mirror: true },
  });
  t.equal(job.status, 202);
  await waitFor(async () => (await db('import_jobs').where('id', job.body.id).first())?.status === 'succeeded', { timeoutMs: 60_000 });
  t.equal((await w.api('DELETE', '/api/v1/repos/acme/mirrored/mirror', { token: owner.token })).status, 200);
  await deliveriesSettled(db, { webhookId: hook.id });
  const cut = at(rx, hook.id)
    .filter((r) => r.event === 'repository')
    .map(json)
    .find((p) => p.action === 'mirror_cutover');
  t.ok(cut, 'mirror_cutover arrives');
  t.equal(cut.repository.full_name, 'acme/mirrored');
  const succeeded = at(rx, hook.id)
    .filter((r) => r.event === 'import')
    .map(json)
    .find((p) => p.import.id === job.body.id);
  t.equal(succeeded.import.mirror, true);
  checkContract(t, at(rx, hook.id));
});

export type { TestWharf };
