import t from 'tap';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { bareDir, commitFiles, common, eventsOf, gitIn, isError, setBranch } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

t.test('pull requests: open, edit, close, reopen, each with its event; numbers shared with issues', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  const tip = await commitFiles(dir, [root], { 'a.txt': 'a2\n' }, 'feature work');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'feature', tip);
  await setBranch(dir, 'release', root);
  await w.api('POST', '/api/v1/repos/acme/app/issues', { token: dev.token, body: { title: 'An issue first' } });

  const base = '/api/v1/repos/acme/app/pulls';
  const opened = await w.api('POST', base, { token: dev.token, body: { title: 'Feature', body: 'Please', head: 'feature' } });
  t.equal(opened.status, 201);
  t.equal(opened.headers.get('location'), `${base}/2`);
  const url = `${w.config.baseUrl}/acme/app/pulls/2`;
  t.match(opened.body, {
    number: 2,
    title: 'Feature',
    state: 'open',
    merged: false,
    head: { ref: 'feature', sha: tip },
    base: { ref: 'main', sha: root },
    user: 'dev',
    url,
  });
  t.equal((await w.api('POST', '/api/v1/repos/acme/app/issues', { token: dev.token, body: { title: 'After' } })).body.number, 3);
  isError(t, await w.api('GET', '/api/v1/repos/acme/app/issues/2', { token: dev.token }), 404, 'not_found');
  t.same(
    (await w.api('GET', base, { token: dev.token })).body.map((p: any) => p.number),
    [2],
  );
  t.same((await w.api('GET', `${base}/2`, { token: dev.token })).body, opened.body);

  t.match((await w.api('PATCH', `${base}/2`, { token: dev.token, body: { title: 'Feature X', base: 'release' } })).body, {
    title: 'Feature X',
    base: { ref: 'release', sha: root },
  });
  t.match((await w.api('PATCH', `${base}/2`, { token: dev.token, body: { state: 'closed' } })).body, { state: 'closed', merged: false });
  t.match((await w.api('PATCH', `${base}/2`, { token: dev.token, body: { state: 'open' } })).body, { state: 'open' });

  // Comments take a pull request's number too.
  const comment = await w.api('POST', '/api/v1/repos/acme/app/issues/2/comments', { token: dev.token, body: { body: 'LGTM' } });
  t.equal(comment.status, 201);
  const commented = (await eventsOf(w, repo)).find((e) => e.type === 'comment')!;
  t.same(commented.payload.issue, { number: 2, title: 'Feature X', state: 'open' });
  t.same(
    (await w.api('GET', '/api/v1/repos/acme/app/issues/2/comments', { token: dev.token })).body.map((c: any) => c.body),
    ['LGTM'],
  );

  const events = (await eventsOf(w, repo)).filter((e) => e.type === 'pull_request');
  t.same(
    events.map((e) => e.action),
    ['opened', 'edited', 'closed', 'reopened'],
  );
  const pr = (title: string, state: string, baseRef: string) => ({
    number: 2,
    title,
    body: 'Please',
    state,
    merged: false,
    merged_at: null,
    head: { ref: 'feature', sha: tip },
    base: { ref: baseRef, sha: root },
    user: 'dev',
    url,
  });
  t.same(events[0].payload, { event: 'pull_request', action: 'opened', number: 2, pull_request: pr('Feature', 'open', 'main'), ...common(w, repo, 'dev') });
  t.same(events[1].payload.pull_request, pr('Feature X', 'open', 'release'));
  t.same(events[2].payload.pull_request, pr('Feature X', 'closed', 'release'));
  t.same(events[3].payload.pull_request, pr('Feature X', 'open', 'release'));
});

t.test('pull requests: bad input and permissions', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  const outsider = await buildUser(w, 'outsider');
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'feature', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'b'));
  const base = '/api/v1/repos/acme/app/pulls';
  isError(t, await w.api('POST', base, { body: { title: 'x', head: 'nope' } }), 422, 'validation_failed', ['/head']);
  isError(t, await w.api('POST', base, { body: { title: 'x', head: 'feature', base: 'nope' } }), 422, 'validation_failed', ['/base']);
  isError(t, await w.api('POST', base, { body: { title: 'x', head: 'main' } }), 422, 'validation_failed', ['/head']);
  isError(t, await w.api('POST', base, { body: { title: 'x', head: '--upload-pack=evil' } }), 422, 'validation_failed', ['/head']);
  isError(t, await w.api('POST', base, { body: { head: 'feature', draft: true } }), 422, 'validation_failed', ['/draft', '/title']);
  isError(t, await w.api('POST', base, { token: outsider.token, body: { title: 'x', head: 'feature' } }), 404, 'not_found');
  isError(t, await w.api('POST', base, { token: null, body: { title: 'x', head: 'feature' } }), 401, 'unauthorized');
  t.equal((await w.api('POST', base, { body: { title: 'ok', head: 'feature' } })).status, 201);
  isError(t, await w.api('PATCH', `${base}/1`, { body: { base: 'nope' } }), 422, 'validation_failed', ['/base']);
  isError(t, await w.api('PATCH', `${base}/1`, { body: { head: 'main' } }), 422, 'validation_failed', ['/head']);
  isError(t, await w.api('PATCH', `${base}/7`, { body: { title: 'x' } }), 404, 'not_found');
  isError(t, await w.api('GET', `${base}/7`), 404, 'not_found');
  isError(t, await w.api('PUT', `${base}/7/merge`), 404, 'not_found');
  isError(t, await w.api('PUT', `${base}/1/merge`, { body: { sha: 'f'.repeat(40) } }), 409, 'conflict');
  isError(t, await w.api('PUT', `${base}/1/merge`, { body: { merge_method: 'octopus' } }), 422, 'validation_failed', ['/merge_method']);
  t.same(
    (await eventsOf(w, repo)).map((e) => `${e.type} ${e.action}`),
    ['pull_request opened'],
  );
});

t.test('merge: a real merge commit in the bare repository, closed+merged and a push on the base branch', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n', 'b.txt': 'b\n' }, 'root');
  const onMain = await commitFiles(dir, [root], { 'a.txt': 'a\n', 'b.txt': 'b on main\n' }, 'main moves');
  const onFeature = await commitFiles(dir, [root], { 'a.txt': 'a on feature\n', 'b.txt': 'b\n' }, 'feature work');
  await setBranch(dir, 'main', onMain);
  await setBranch(dir, 'feature', onFeature);
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { token: dev.token, body: { title: 'Feature', head: 'feature' } });
  // A second pull request whose head is the base of the first: the merge moves it.
  await setBranch(dir, 'release', root);
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { token: dev.token, body: { title: 'Release', head: 'main', base: 'release' } });

  const merged = await w.api('PUT', '/api/v1/repos/acme/app/pulls/1/merge', { token: dev.token, body: { sha: onFeature } });
  t.equal(merged.status, 200);
  t.match(merged.body, { merged: true, fast_forward: false });
  const sha = merged.body.sha;
  t.equal(await gitIn(dir, ['rev-parse', 'refs/heads/main']), sha);
  t.equal(await gitIn(dir, ['log', '-1', '--format=%P', 'main']), `${onMain} ${onFeature}`, 'a merge commit of main and feature');
  t.match(await gitIn(dir, ['log', '-1', '--format=%an <%ae>%n%s', 'main']), /^dev <dev@users\.noreply\.127\.0\.0\.1>\nMerge pull request #1 from feature$/);
  t.equal(await gitIn(dir, ['show', 'main:a.txt']), 'a on feature');
  t.equal(await gitIn(dir, ['show', 'main:b.txt']), 'b on main');

  const pull = (await w.api('GET', '/api/v1/repos/acme/app/pulls/1')).body;
  t.match(pull, { state: 'closed', merged: true, merge_commit_sha: sha });
  const events = await waitFor(
    async () => {
      const after = (await eventsOf(w, repo)).slice(2);
      return after.length >= 3 && after;
    },
    { timeoutMs: 5_000, what: 'the merge to raise its three events' },
  ).catch(async () => (await eventsOf(w, repo)).slice(2));
  t.same(
    events.map((e) => [e.type, e.action ?? null]),
    [
      ['pull_request', 'closed'],
      ['push', null],
      ['pull_request', 'synchronize'],
    ],
  );
  t.match(events[2].payload, { number: 2, pull_request: { head: { ref: 'main', sha }, base: { ref: 'release', sha: root } } });
  t.match(events[0].payload, {
    event: 'pull_request',
    action: 'closed',
    number: 1,
    pull_request: { state: 'closed', merged: true, merged_at: pull.merged_at, head: { sha: onFeature }, base: { ref: 'main', sha: onMain } },
  });
  const push = events[1];
  t.equal(push.ref, 'refs/heads/main');
  t.match(push.payload, {
    event: 'push',
    ref: 'refs/heads/main',
    before: onMain,
    after: sha,
    created: false,
    deleted: false,
    forced: false,
    ...common(w, repo, 'dev'),
  });
  t.same(
    push.payload.commits.map((c: any) => c.id),
    [sha],
    'the merge commit is the one commit new to any ref',
  );
  t.equal(push.payload.head_commit.id, sha);

  isError(t, await w.api('PUT', '/api/v1/repos/acme/app/pulls/1/merge', { token: dev.token }), 409, 'conflict');
  isError(t, await w.api('PATCH', '/api/v1/repos/acme/app/pulls/1', { token: dev.token, body: { state: 'open' } }), 422, 'validation_failed', ['/state']);
});

t.test('merge: fast-forward when possible; conflicts are a 409 that changes nothing', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  const ahead = await commitFiles(dir, [root], { 'a.txt': 'ahead\n' }, 'ahead');
  const clash = await commitFiles(dir, [root], { 'a.txt': 'clash\n' }, 'clash');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'ff', ahead);
  await setBranch(dir, 'clash', clash);
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'FF', head: 'ff' } });
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { body: { title: 'Clash', head: 'clash' } });

  const ff = await w.api('PUT', '/api/v1/repos/acme/app/pulls/1/merge');
  t.match(ff.body, { sha: ahead, merged: true, fast_forward: true });
  t.equal(await gitIn(dir, ['rev-parse', 'refs/heads/main']), ahead);
  const before = (await eventsOf(w, repo)).length;
  isError(t, await w.api('PUT', '/api/v1/repos/acme/app/pulls/2/merge'), 409, 'conflict');
  t.equal(await gitIn(dir, ['rev-parse', 'refs/heads/main']), ahead, 'main unchanged');
  t.equal((await eventsOf(w, repo)).length, before, 'no events');
  t.match((await w.api('GET', '/api/v1/repos/acme/app/pulls/2')).body, { state: 'open', merged: false });
  const push = (await eventsOf(w, repo)).find((e) => e.type === 'push')!;
  t.match(push.payload, { before: root, after: ahead, forced: false });
});

t.test('a git push to a pull request head raises pull_request synchronize', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const dev = await buildUser(w, 'dev', { org: 'acme', role: 'member' });
  const dir = bareDir(w, repo);
  const root = await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root');
  await setBranch(dir, 'main', root);
  await setBranch(dir, 'feature', await commitFiles(dir, [root], { 'a.txt': 'b\n' }, 'b'));
  await w.api('POST', '/api/v1/repos/acme/app/pulls', { token: dev.token, body: { title: 'Feature', head: 'feature' } });

  // A real push over smart HTTP from a clone.
  const clone = `${w.dir}/clone`;
  const remote = `${w.url.replace('http://', `http://dev:${dev.token}@`)}/acme/app.git`;
  await gitIn(w.dir, ['clone', '--quiet', remote, clone]);
  const next = await commitFiles(clone, [await gitIn(clone, ['rev-parse', 'origin/feature'])], { 'a.txt': 'c\n' }, 'more work');
  await gitIn(clone, ['push', '--quiet', 'origin', `${next}:refs/heads/feature`]);

  const sync: any = await waitFor(async () => (await eventsOf(w, repo)).find((e) => e.action === 'synchronize'), {
    timeoutMs: 5_000,
    what: 'a synchronize event',
  }).catch(() => undefined);
  t.ok(sync, 'synchronize raised');
  t.match(sync.payload, {
    event: 'pull_request',
    action: 'synchronize',
    number: 1,
    pull_request: { head: { ref: 'feature', sha: next }, state: 'open' },
    ...common(w, repo, 'dev'),
  });
  t.equal((await w.api('GET', '/api/v1/repos/acme/app/pulls/1')).body.head.sha, next);
  t.same(
    (await eventsOf(w, repo)).map((e) => `${e.type} ${e.action}`),
    ['pull_request opened', 'push null', 'pull_request synchronize'],
  );
});
