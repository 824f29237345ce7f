import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { common, eventsOf, isError } from './helpers.ts';

const SHA = 'a'.repeat(40);

t.test('pipelines: created queued, then running and success, each a status_changed', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const ci = await buildUser(w, 'ci', { org: 'acme', role: 'member' });
  const made = await w.api('POST', '/api/v1/repos/acme/app/pipelines', { token: ci.token, body: { name: 'build', ref: 'refs/heads/main', sha: SHA } });
  t.equal(made.status, 201);
  const id = made.body.id;
  const url = `${w.config.baseUrl}/acme/app/pipelines/${id}`;
  t.match(made.body, { id, name: 'build', ref: 'refs/heads/main', sha: SHA, status: 'queued', url });
  t.equal((await w.api('PATCH', `/api/v1/repos/acme/app/pipelines/${id}`, { token: ci.token, body: { status: 'running' } })).body.status, 'running');
  // The same status again is no change and raises nothing.
  t.equal((await w.api('PATCH', `/api/v1/repos/acme/app/pipelines/${id}`, { token: ci.token, body: { status: 'running' } })).status, 200);
  t.equal((await w.api('PATCH', `/api/v1/repos/acme/app/pipelines/${id}`, { token: ci.token, body: { status: 'success' } })).body.status, 'success');
  t.equal((await w.api('GET', `/api/v1/repos/acme/app/pipelines/${id}`, { token: ci.token })).body.status, 'success');

  const events = await eventsOf(w, repo);
  t.same(
    events.map((e) => [e.type, e.action]),
    [
      ['pipeline', 'status_changed'],
      ['pipeline', 'status_changed'],
      ['pipeline', 'status_changed'],
    ],
  );
  const pipeline = (status: string, previous_status: string | null) => ({ id, name: 'build', ref: 'refs/heads/main', sha: SHA, status, previous_status, url });
  t.same(events[0].payload, { event: 'pipeline', action: 'status_changed', pipeline: pipeline('queued', null), ...common(w, repo, 'ci') });
  t.same(events[1].payload.pipeline, pipeline('running', 'queued'));
  t.same(events[2].payload.pipeline, pipeline('success', 'running'));

  const failed = await w.api('POST', '/api/v1/repos/acme/app/pipelines', { token: ci.token, body: { name: 'lint', ref: 'main', sha: SHA, status: 'failed' } });
  t.equal(failed.body.status, 'failed');
  t.same((await eventsOf(w, repo))[3].payload.pipeline.previous_status, null);
});

t.test('pipelines: bad input and permissions', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  const outsider = await buildUser(w, 'outsider');
  const path = '/api/v1/repos/acme/app/pipelines';
  isError(t, await w.api('POST', path, { body: { name: 'b' } }), 422, 'validation_failed', ['/ref', '/sha']);
  isError(t, await w.api('POST', path, { body: { name: 'b', ref: 'main', sha: 'xyz', status: 'done', color: 'red' } }), 422, 'validation_failed', [
    '/color',
    '/sha',
    '/status',
  ]);
  isError(t, await w.api('POST', path, { token: null, body: { name: 'b', ref: 'main', sha: SHA } }), 401, 'unauthorized');
  isError(t, await w.api('POST', path, { token: outsider.token, body: { name: 'b', ref: 'main', sha: SHA } }), 404, 'not_found');
  const made = await w.api('POST', path, { body: { name: 'b', ref: 'main', sha: SHA } });
  isError(t, await w.api('PATCH', `${path}/${made.body.id}`, { body: { status: 'paused' } }), 422, 'validation_failed', ['/status']);
  isError(t, await w.api('PATCH', `${path}/${made.body.id}`, { body: {} }), 422, 'validation_failed', ['/status']);
  isError(t, await w.api('PATCH', `${path}/12345`, { body: { status: 'running' } }), 404, 'not_found');
  isError(t, await w.api('GET', `${path}/12345`), 404, 'not_found');
  isError(t, await w.api('PATCH', `${path}/3000000000`, { body: { status: 'running' } }), 404, 'not_found');
  t.equal((await eventsOf(w, repo)).length, 1);
});
