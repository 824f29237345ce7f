import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { common, eventsOf, isError } from './helpers.ts';

t.test('issues: open, read, list, edit, close and reopen, each with its event', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const base = '/api/v1/repos/acme/app/issues';

  const opened = await w.api('POST', base, {
    token: dev.token,
    body: { title: 'Crash on start', body: 'Stack trace', labels: ['bug', 'p1'], assignees: ['dev'] },
  });
  t.equal(opened.status, 201);
  t.equal(opened.headers.get('location'), `${base}/1`);
  t.match(opened.body, { number: 1, title: 'Crash on start', body: 'Stack trace', state: 'open', labels: ['bug', 'p1'], assignees: ['dev'], user: 'dev' });
  const url = `${w.config.baseUrl}/acme/app/issues/1`;
  t.equal(opened.body.url, url);

  const second = await w.api('POST', base, { token: dev.token, body: { title: 'Docs' } });
  t.equal(second.body.number, 2);
  t.same(second.body.labels, []);

  const read = await w.api('GET', `${base}/1`, { token: dev.token });
  t.equal(read.status, 200);
  t.same(read.body, opened.body);
  const list = await w.api('GET', base, { token: dev.token });
  t.same(
    list.body.map((i: any) => i.number),
    [2, 1],
  );
  const page = await w.api('GET', `${base}?limit=1`, { token: dev.token });
  t.same(
    page.body.map((i: any) => i.number),
    [2],
  );
  t.match(page.headers.get('link'), /cursor=2>; rel="next"/);
  const next = await w.api('GET', `${base}?limit=1&cursor=2`, { token: dev.token });
  t.same(
    next.body.map((i: any) => i.number),
    [1],
  );

  const edited = await w.api('PATCH', `${base}/1`, { token: dev.token, body: { title: 'Crash on first start', labels: ['bug'] } });
  t.equal(edited.status, 200);
  t.match(edited.body, { title: 'Crash on first start', labels: ['bug'], state: 'open' });
  const closed = await w.api('PATCH', `${base}/1`, { token: dev.token, body: { state: 'closed' } });
  t.match(closed.body, { state: 'closed' });
  t.match(closed.body.closed_at, /^\d{4}-/);
  t.same(
    (await w.api('GET', `${base}?state=closed`, { token: dev.token })).body.map((i: any) => i.number),
    [1],
  );
  const reopened = await w.api('PATCH', `${base}/1`, { token: dev.token, body: { state: 'open' } });
  t.equal(reopened.body.closed_at, null);
  // Nothing changed: no event.
  t.equal((await w.api('PATCH', `${base}/1`, { token: dev.token, body: { state: 'open', title: 'Crash on first start' } })).status, 200);

  const events = await eventsOf(w, repo);
  const issue = (title: string, state: string, labels: string[]) => ({ number: 1, title, body: 'Stack trace', state, labels, assignees: ['dev'], url });
  t.same(
    events.map((e) => [e.type, e.action]),
    [
      ['issue', 'opened'],
      ['issue', 'opened'],
      ['issue', 'edited'],
      ['issue', 'closed'],
      ['issue', 'reopened'],
    ],
  );
  t.ok(events.every((e) => e.sender_id === dev.user.id && e.ref === null));
  t.same(events[0].payload, { event: 'issue', action: 'opened', issue: issue('Crash on start', 'open', ['bug', 'p1']), ...common(w, repo, 'dev') });
  t.same(events[2].payload.issue, issue('Crash on first start', 'open', ['bug']));
  t.same(events[3].payload, { event: 'issue', action: 'closed', issue: issue('Crash on first start', 'closed', ['bug']), ...common(w, repo, 'dev') });
  t.same(events[4].payload.issue.state, 'open');
});

t.test('issues: permissions and bad input give SPEC §4 errors, never a 5xx', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app', 'internal');
  await buildRepo(w, 'acme', 'secret', 'private');
  const outsider = await buildUser(w, 'outsider');
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const base = '/api/v1/repos/acme/app/issues';

  isError(t, await w.api('POST', base, { token: null, body: { title: 'x' } }), 401, 'unauthorized');
  isError(t, await w.api('GET', base, { token: null }), 401, 'unauthorized');
  isError(t, await w.api('POST', base, { token: outsider.token, body: { title: 'x' } }), 403, 'forbidden');
  t.equal((await w.api('GET', base, { token: outsider.token })).status, 200, 'internal repositories are readable by any user');
  isError(t, await w.api('POST', '/api/v1/repos/acme/secret/issues', { token: outsider.token, body: { title: 'x' } }), 404, 'not_found');
  isError(t, await w.api('GET', '/api/v1/repos/acme/secret/issues', { token: outsider.token }), 404, 'not_found');
  isError(t, await w.api('POST', '/api/v1/repos/acme/nope/issues', { token: dev.token, body: { title: 'x' } }), 404, 'not_found');

  isError(t, await w.api('POST', base, { token: dev.token, body: {} }), 422, 'validation_failed', ['/title']);
  isError(t, await w.api('POST', base, { token: dev.token, body: { title: 5, labels: 'bug', assignees: [7], extra: 1 } }), 422, 'validation_failed', [
    '/assignees/0',
    '/extra',
    '/labels',
    '/title',
  ]);
  isError(t, await w.api('POST', base, { token: dev.token, body: { title: '' } }), 422, 'validation_failed', ['/title']);
  isError(t, await w.api('POST', base, { token: dev.token, body: [] }), 422, 'validation_failed');
  isError(t, await w.api('POST', base, { token: dev.token }), 422, 'validation_failed');
  isError(t, await w.api('POST', base, { token: dev.token, rawBody: '{"title":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
  isError(t, await w.api('POST', base, { token: dev.token, rawBody: 'title=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  isError(t, await w.api('POST', base, { token: dev.token, body: { title: 'x', body: 'y'.repeat(1024 * 1024) } }), 413, 'payload_too_large');

  await w.api('POST', base, { token: dev.token, body: { title: 'real' } });
  isError(t, await w.api('PATCH', `${base}/1`, { token: dev.token, body: { state: 'done' } }), 422, 'validation_failed', ['/state']);
  isError(t, await w.api('PATCH', `${base}/1`, { token: dev.token, body: { number: 3 } }), 422, 'validation_failed', ['/number']);
  isError(t, await w.api('PATCH', `${base}/1`, { token: outsider.token, body: { title: 'mine' } }), 403, 'forbidden');
  isError(t, await w.api('PATCH', `${base}/99`, { token: dev.token, body: { title: 'x' } }), 404, 'not_found');
  isError(t, await w.api('GET', `${base}/99`, { token: dev.token }), 404, 'not_found');
  isError(t, await w.api('GET', `${base}/abc`, { token: dev.token }), 404, 'not_found');
  isError(t, await w.api('GET', `${base}?limit=101`, { token: dev.token }), 422, 'validation_failed', ['/limit']);
  isError(t, await w.api('GET', `${base}?cursor=zz&state=maybe`, { token: dev.token }), 422, 'validation_failed', ['/cursor', '/state']);
  // Values Postgres cannot store or compare are refused before they reach it.
  isError(t, await w.api('POST', base, { token: dev.token, body: { title: 'a\u0000b', labels: ['x\u0000'] } }), 422, 'validation_failed', [
    '/labels/0',
    '/title',
  ]);
  isError(t, await w.api('GET', `${base}/99999999999`, { token: dev.token }), 404, 'not_found');
  isError(t, await w.api('PATCH', `${base}/2147483648`, { token: dev.token, body: { title: 'x' } }), 404, 'not_found');
  isError(t, await w.api('GET', `${base}?cursor=9999999999`, { token: dev.token }), 422, 'validation_failed', ['/cursor']);

  const events = await eventsOf(w, repo);
  t.same(
    events.map((e) => e.action),
    ['opened'],
    'only the one real change raised an event',
  );
});

t.test('issues and pull requests opened at once get distinct numbers, none refused', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app');
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: `Issue ${i}`, labels: ['same'] } })),
  );
  t.same(
    answers.map((a) => a.status),
    Array(20).fill(201),
  );
  t.same(
    answers.map((a) => a.body.number).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
});
