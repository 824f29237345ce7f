import t from 'tap';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { bareDir, commitFiles, eventsOf, isError, setBranch } from '../producers/helpers.ts';

const path = '/api/v1/repos/acme/app/issues/bulk';

/** A valid import record. */
function record(number: number, extra: Record<string, unknown> = {}) {
  return {
    number,
    title: `Issue ${number}`,
    body: `Body of ${number}`,
    labels: number % 2 ? ['bug', 'imported'] : ['imported'],
    assignees: ['someone-elsewhere'],
    state: number % 3 ? 'open' : 'closed',
    ...extra,
  };
}

async function issueCount(w: TestWharf) {
  return Number((await w.running.services.db('issues').count('* as n').first())!.n);
}

t.test('bulk: 10,000 issues in one call, labels created, numbering continues after the highest, no events', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  const issues = Array.from({ length: 10_000 }, (_, i) =>
    record(i + 1, i === 41 ? { created_at: '2020-01-02T03:04:05Z', closed_at: '2021-01-01T00:00:00Z', state: 'closed' } : {}),
  );
  const answer = await w.api('POST', path, { body: { issues } });
  t.equal(answer.status, 200);
  t.same(answer.body, { created: 10_000, updated: 0, skipped: 0 });
  t.equal(await issueCount(w), 10_000);

  const one = (await w.api('GET', '/api/v1/repos/acme/app/issues/9999')).body;
  t.match(one, { number: 9999, title: 'Issue 9999', body: 'Body of 9999', labels: ['bug', 'imported'], assignees: ['someone-elsewhere'], state: 'closed' });
  const dated = (await w.api('GET', '/api/v1/repos/acme/app/issues/42')).body;
  t.match(dated, { state: 'closed', created_at: '2020-01-02T03:04:05.000Z', closed_at: '2021-01-01T00:00:00.000Z' });
  const labels = await w.running.services.db('labels').where('repository_id', repo.id).orderBy('name').pluck('name');
  t.same(labels, ['bug', 'imported']);
  t.equal(Number((await w.running.services.db('issue_labels').count('* as n').first())!.n), 15_000);
  t.same(await eventsOf(w, repo), [], 'a bulk import raises no events');

  const next = await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'New' } });
  t.equal(next.body.number, 10_001);
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'f', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'b'));
  t.equal((await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'PR', head: 'f' } })).body.number, 10_002);
  t.same(
    (await eventsOf(w, repo)).map((e) => e.type),
    ['issue', 'pull_request'],
  );
});

t.test('bulk: one invalid record among valid ones writes nothing; details name each record and field', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app');
  const issues: unknown[] = Array.from({ length: 50 }, (_, i) => record(i + 1));
  issues[3] = { number: 4, body: 'no title' };
  issues[7] = { ...record(8), state: 'resolved', labels: 'bug', color: 'red' };
  issues[9] = { ...record(10), number: '10', created_at: 'yesterday' };
  const answer = await w.api('POST', path, { body: { issues } });
  isError(t, answer, 422, 'validation_failed', [
    '/issues/3/title',
    '/issues/7/state',
    '/issues/7/labels',
    '/issues/7/color',
    '/issues/9/number',
    '/issues/9/created_at',
  ]);
  t.equal(await issueCount(w), 0, 'nothing written');

  isError(t, await w.api('POST', path, { body: { issues: [record(1), record(2), record(1)] } }), 422, 'validation_failed', ['/issues/2/number']);
  // Schema failures and duplicates are reported together.
  isError(t, await w.api('POST', path, { body: { issues: [record(1), { number: 1 }, record(2), record(2)] } }), 422, 'validation_failed', [
    '/issues/1/number',
    '/issues/1/title',
    '/issues/3/number',
  ]);
  isError(t, await w.api('POST', path, { body: { issues: [record(1)], on_conflict: 'merge', dry_run: true } }), 422, 'validation_failed', [
    '/dry_run',
    '/on_conflict',
  ]);
  isError(t, await w.api('POST', path, { body: { on_conflict: 'skip' } }), 422, 'validation_failed', ['/issues']);
  isError(t, await w.api('POST', path, { body: [record(1)] }), 422, 'validation_failed');
  isError(t, await w.api('POST', path, { body: { issues: [record(0)] } }), 422, 'validation_failed', ['/issues/0/number']);
  // A NUL is refused as the body is read, before the schema runs: its detail comes alone.
  isError(t, await w.api('POST', path, { body: { issues: [record(1), record(2, { body: 'nul \u0000' }), record(2147483648)] } }), 422, 'validation_failed', [
    '/issues/1/body',
  ]);
  isError(t, await w.api('POST', path, { body: { issues: [record(1), record(2147483648)] } }), 422, 'validation_failed', ['/issues/1/number']);
  t.equal(await issueCount(w), 0);
});

t.test('bulk: on_conflict error, skip and update', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'f', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'b'));
  await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'Existing', labels: ['old'] } });
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'A PR', head: 'f' } });
  const events = (await eventsOf(w, repo)).length;

  const clash = await w.api('POST', path, { body: { issues: [record(3), record(1), record(2)] } });
  isError(t, clash, 409, 'conflict', ['/issues/1/number', '/issues/2/number']);
  t.equal(await issueCount(w), 2, 'nothing written on 409');

  t.same((await w.api('POST', path, { body: { issues: [record(3), record(1), record(2)], on_conflict: 'skip' } })).body, {
    created: 1,
    updated: 0,
    skipped: 2,
  });
  t.equal((await w.api('GET', '/api/v1/repos/acme/app/issues/1')).body.title, 'Existing', 'skipped issue untouched');

  isError(t, await w.api('POST', path, { body: { issues: [record(2, { title: 'not a PR' })], on_conflict: 'update' } }), 409, 'conflict', ['/issues/0/number']);
  const updated = await w.api('POST', path, {
    body: { issues: [record(1, { title: 'Renamed', labels: ['new'], state: 'closed' }), record(4), record(3, { labels: [] })], on_conflict: 'update' },
  });
  t.same(updated.body, { created: 1, updated: 2, skipped: 0 });
  t.match((await w.api('GET', '/api/v1/repos/acme/app/issues/1')).body, { title: 'Renamed', labels: ['new'], state: 'closed', user: 'admin' });
  t.same((await w.api('GET', '/api/v1/repos/acme/app/issues/3')).body.labels, []);
  t.match((await w.api('GET', '/api/v1/repos/acme/app/pulls/2')).body, { title: 'A PR' });
  t.equal((await eventsOf(w, repo)).length, events, 'no events from any mode');
  t.equal((await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'After' } })).body.number, 5);
});

t.test('bulk: limits and permissions', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app');
  const member = await buildUser(w, 'member', { org: 'acme', role: 'member' });
  const owner = await buildUser(w, 'owner', { org: 'acme', role: 'owner' });
  const outsider = await buildUser(w, 'outsider');

  const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ number: i + 1, title: 't' }));
  isError(t, await w.api('POST', path, { body: { issues: tooMany } }), 422, 'validation_failed', ['/issues']);
  const huge = JSON.stringify({ issues: [{ number: 1, title: 't', body: 'x'.repeat(50 * 1024 * 1024) }] });
  isError(t, await w.api('POST', path, { rawBody: huge, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  // Over 1 MiB is fine here: the bulk import's limit is 50 MiB.
  const big = Array.from({ length: 2000 }, (_, i) => ({ number: i + 1, title: 't', body: 'y'.repeat(1000) }));
  t.same((await w.api('POST', path, { token: owner.token, body: { issues: big } })).body, { created: 2000, updated: 0, skipped: 0 });

  isError(t, await w.api('POST', path, { token: member.token, body: { issues: [{ number: 5000, title: 't' }] } }), 403, 'forbidden');
  isError(t, await w.api('POST', path, { token: outsider.token, body: { issues: [{ number: 5000, title: 't' }] } }), 404, 'not_found');
  isError(t, await w.api('POST', path, { token: null, body: { issues: [{ number: 5000, title: 't' }] } }), 401, 'unauthorized');
  isError(t, await w.api('POST', path, { rawBody: '{"issues": [', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
  isError(t, await w.api('POST', path, { rawBody: 'issues', headers: { 'content-type': 'text/csv' } }), 415, 'unsupported_media_type');
  t.equal(Number((await w.running.services.db('issues').count('* as n').first())!.n), 2000);
});

t.test('bulk: a leap second or any time JavaScript cannot read is a 422 naming the field', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app');
  const issues = [
    record(1, { created_at: '2016-12-31T23:59:60Z' }),
    record(2, { state: 'closed', closed_at: '2016-12-31T23:59:60Z' }),
    record(3, { created_at: '2017-01-01T08:59:60+09:00' }),
    record(4, { created_at: '2016-12-31T23:59:59Z' }),
  ];
  isError(t, await w.api('POST', path, { body: { issues } }), 422, 'validation_failed', [
    '/issues/0/created_at',
    '/issues/1/closed_at',
    '/issues/2/created_at',
  ]);
  t.equal(await issueCount(w), 0, 'nothing written');
  t.same((await w.api('POST', path, { body: { issues: [issues[3]] } })).body, { created: 1, updated: 0, skipped: 0 });
});

t.test('bulk: numbers are at most 1,000,000,000, so the next issue or pull request always has a number', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  for (const number of [2147483647, 2147483646, 1_000_000_001]) {
    isError(t, await w.api('POST', path, { body: { issues: [record(number)] } }), 422, 'validation_failed', ['/issues/0/number']);
  }
  t.equal(await issueCount(w), 0);
  t.same((await w.api('POST', path, { body: { issues: [record(1_000_000_000)] } })).body, { created: 1, updated: 0, skipped: 0 });
  const next = await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'After the highest' } });
  t.equal(next.status, 201);
  t.equal(next.body.number, 1_000_000_001);
  t.equal((await w.api('GET', '/api/v1/repos/acme/app/issues/1000000001')).body.title, 'After the highest');
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'f', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'b'));
  const pull = await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'PR', head: 'f' } });
  t.equal(pull.status, 201);
  t.equal(pull.body.number, 1_000_000_002);
  t.equal((await w.api('GET', '/api/v1/repos/acme/app/pulls/1000000002')).status, 200);
});

t.test('bulk: a repository whose numbers are used up answers 409 to a new issue or pull request, never a number past the column', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  // Only a database written before the bound could hold the last number; put it there directly.
  await w.running.services.db('issues').insert({
    repository_id: repo.id,
    number: 2147483647,
    kind: 'issue',
    title: 'Last',
    body: '',
    state: 'open',
    assignees: '[]',
    author_id: null,
    created_at: 0,
    updated_at: 0,
  });
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'One more' } }), 409, 'conflict');
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'f', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'b'));
  isError(t, await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'PR', head: 'f' } }), 409, 'conflict');
  t.equal(await issueCount(w), 1, 'nothing written');
  t.equal((await w.api('GET', '/api/v1/repos/acme/app/issues/2147483647')).body.title, 'Last', 'the last issue still answers');
});
