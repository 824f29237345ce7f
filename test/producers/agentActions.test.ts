import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { bareDir, commitFiles, common, eventsOf, isError, setBranch } from './helpers.ts';

t.test('agent actions on an issue, a pull request and a commit raise agent performed', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const bot = await buildUser(w, 'bot', { org: 'acme', role: 'member' });
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'feature', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'change'));
  await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'Triage me' } });
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'Feature', head: 'feature' } });

  const path = '/api/v1/repos/acme/app/agent-actions';
  const targets = [
    { type: 'issue', id: 1 },
    { type: 'pull_request', id: 2 },
    { type: 'commit', id: root },
  ];
  for (const target of targets) {
    const done = await w.api('POST', path, { token: bot.token, body: { name: 'triage-bot', action: 'labeled', summary: 'Added label bug', target } });
    t.equal(done.status, 201);
    t.match(done.body, { name: 'triage-bot', action: 'labeled', summary: 'Added label bug', target });
  }
  const events = (await eventsOf(w, repo)).filter((e) => e.type === 'agent');
  t.same(
    events.map((e) => e.action),
    ['performed', 'performed', 'performed'],
  );
  t.same(events[0].payload, {
    event: 'agent',
    action: 'performed',
    agent: { name: 'triage-bot', action: 'labeled', summary: 'Added label bug', target: targets[0] },
    ...common(w, repo, 'bot'),
  });
  t.same(
    events.map((e) => e.payload.agent.target),
    targets,
  );

  const bad = (target: unknown) => w.api('POST', path, { body: { name: 'n', action: 'a', summary: 's', target } });
  isError(t, await bad({ type: 'issue', id: 2 }), 422, 'validation_failed', ['/target/id']);
  isError(t, await bad({ type: 'pull_request', id: 1 }), 422, 'validation_failed', ['/target/id']);
  isError(t, await bad({ type: 'issue', id: 99 }), 422, 'validation_failed', ['/target/id']);
  isError(t, await bad({ type: 'commit', id: 'b'.repeat(40) }), 422, 'validation_failed', ['/target/id']);
  isError(t, await bad({ type: 'commit', id: 3 }), 422, 'validation_failed', ['/target/id']);
  isError(t, await bad({ type: 'branch', id: 3 }), 422, 'validation_failed', ['/target/type']);
  isError(t, await bad({ type: 'issue' }), 422, 'validation_failed', ['/target/id']);
  t.equal((await eventsOf(w, repo)).filter((e) => e.type === 'agent').length, 3, 'refused actions raise nothing');
});

t.test('agent actions: missing fields, unknown fields and permissions', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app', 'public');
  const outsider = await buildUser(w, 'outsider');
  const path = '/api/v1/repos/acme/app/agent-actions';
  isError(t, await w.api('POST', path, { body: {} }), 422, 'validation_failed', ['/action', '/name', '/summary', '/target']);
  isError(
    t,
    await w.api('POST', path, { body: { name: 'n', action: 'a', summary: 's', target: { type: 'issue', id: 1, x: 1 }, y: 2 } }),
    422,
    'validation_failed',
    ['/target/x', '/y'],
  );
  const ok = { name: 'n', action: 'a', summary: 's', target: { type: 'issue', id: 1 } };
  isError(t, await w.api('POST', path, { token: null, body: ok }), 401, 'unauthorized');
  isError(t, await w.api('POST', path, { token: outsider.token, body: ok }), 403, 'forbidden');
});
