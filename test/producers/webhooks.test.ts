import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook } from '../delivery/build.ts';
import { bareDir, commitFiles, eventsOf, setBranch } from './helpers.ts';

t.test('every producer event reaches a subscribed webhook, signed, with the outbox bytes', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const receiver = await startReceiver(t);
  await buildWebhook(w, repo, receiver, { events: ['*'] });
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'feature', await commitFiles(dir, [root], { 'b.txt': 'b\n' }, 'b'));

  const api = (method: string, path: string, body?: unknown) => w.api(method, `/api/v1/repos/acme/app${path}`, { token: dev.token, body });
  await api('POST', '/issues', { title: 'Bug' });
  await api('POST', '/issues/1/comments', { body: 'Me too' });
  await api('POST', '/pulls', { title: 'Fix', head: 'feature' });
  await api('PUT', '/pulls/2/merge');
  await api('POST', '/releases', { tag_name: 'v1' });
  await api('POST', '/pipelines', { name: 'ci', ref: 'refs/heads/main', sha: root });
  await api('POST', '/agent-actions', { name: 'bot', action: 'triaged', summary: 'ok', target: { type: 'issue', id: 1 } });

  const events = await eventsOf(w, repo);
  const types = ['issue', 'comment', 'pull_request', 'pull_request', 'push', 'push', 'release', 'pipeline', 'agent'];
  t.same(
    events.map((e) => e.type),
    types,
  );
  const got = await waitFor(
    () => {
      const real = receiver.received.filter((r) => r.event !== 'ping');
      return real.length >= types.length ? real : undefined;
    },
    { what: 'every delivery' },
  );
  t.same(got.map((r) => r.event).sort(), [...types].sort(), 'one delivery per event');
  t.ok(
    got.every((r) => r.signatureOk),
    'every delivery signed',
  );
  const rows = await w.running.services.db('events').where('repository_id', repo.id).orderBy('id').pluck('payload');
  t.same(got.map((r) => r.body.toString('utf8')).sort(), [...rows].sort(), 'bodies are the outbox bytes');
});
