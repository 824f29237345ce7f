import t from 'tap';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { buildRepo, buildUser, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl, type GitClient } from '../helpers/git.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';

/** Pushes main (two commits), a branch `feature/greet` off it (two commits) and then one more commit on main, so merging needs a merge commit. */
async function pushHistory(t: TestLike, w: TestWharf, fullName: string): Promise<{ g: GitClient; work: string }> {
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'Start the widget', { 'README.md': '# Widgets\n' });
  await g.commit(work, 'Add the frame', { 'frame.txt': 'frame\n' });
  await g.ok(['checkout', '-q', '-b', 'feature/greet'], { cwd: work });
  await g.commit(work, 'Greet in English', { 'src/greet.txt': 'hello\n' });
  await g.commit(work, 'Greet in Welsh too', { 'src/greet.txt': 'hello\nshwmae\n', 'frame.txt': 'frame\nwith a border\n' });
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  await g.commit(work, 'Note the licence', { LICENSE: 'MIT\n' });
  await g.ok(['push', '-q', repoUrl(w, fullName, w.adminToken), 'main', 'feature/greet'], { cwd: work });
  await w.pushesRecorded();
  return { g, work };
}

/** The CSRF token of the page's first form. */
async function csrfOf(page: Page): Promise<string> {
  return (await page.getAttribute('input[name=_csrf]', 'value'))!;
}

/** Posts a form with the browser's own cookies, as a forged form on another site would try to. */
async function postAs(page: Page, url: string, fields: Record<string, string>) {
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
}

t.test('a member opens, comments on, closes and reopens an issue, and merges a pull request from its page', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  const { g } = await pushHistory(t, w, 'demo/widgets');
  const { page } = await openBrowser(t);
  await signIn(page, w);

  await page.goto(`${w.url}/demo/widgets/issues`);
  t.match(await page.textContent('main'), 'No open issues.');
  await expectAccessible(t, page, 'issues-empty');
  await Promise.all([page.waitForURL(`${w.url}/demo/widgets/issues/new`), page.click('text=New issue')]);
  await expectAccessible(t, page, 'issue-new');
  // An empty title comes back with its error next to the field, nothing opened.
  await page.fill('#issue-title', '   ');
  await page.fill('#issue-body', 'kept');
  await page.evaluate(() => document.querySelector('#issue-title')!.removeAttribute('required'));
  await page.click('button[type=submit].primary');
  t.match(await page.textContent('.field-error'), 'must NOT have fewer than 1 characters', 'a blank title is refused');
  t.equal(await page.inputValue('#issue-body'), 'kept', 'what was typed is kept');
  await page.fill('#issue-title', 'The <b>frame</b> wobbles');
  await page.fill('#issue-body', 'Steps:\n1. push it\n2. <script>window.pwned=1</script>');
  await Promise.all([page.waitForURL(`${w.url}/demo/widgets/issues/1`), page.click('button[type=submit].primary')]);
  t.match(await page.textContent('.thread-title'), 'The <b>frame</b> wobbles', 'the title, as text');
  t.match(await page.textContent('.flash'), 'Issue #1 opened.');
  t.equal(await page.textContent('.post .written'), 'Steps:\n1. push it\n2. <script>window.pwned=1</script>', 'the body as typed, line breaks kept');
  t.equal(await page.evaluate(() => (window as any).pwned), undefined, 'a body never runs');
  await expectAccessible(t, page, 'issue');

  await page.fill('#comment-body', 'Seen on main too.\nTwice.');
  await page.click('text=Comment >> nth=-1');
  await page.waitForURL(/\/demo\/widgets\/issues\/1#comment-\d+$/);
  t.match(await page.textContent('article[id^=comment-]'), 'Seen on main too.\nTwice.', 'the comment is on the page');
  await page.click('button:has-text("Close issue")');
  await page.waitForSelector('.flash');
  t.equal(await page.textContent('.thread-head .result'), 'Closed');
  t.equal((await w.api('GET', '/api/v1/repos/demo/widgets/issues/1')).body.state, 'closed', 'closed through the API too');
  await page.goto(`${w.url}/demo/widgets/issues?state=closed`);
  t.match(await page.textContent('main .list'), 'The <b>frame</b> wobbles', 'listed under Closed');
  await page.click('text=The <b>frame</b> wobbles');
  await page.click('button:has-text("Reopen issue")');
  await page.waitForSelector('.flash');
  t.equal(await page.textContent('.thread-head .result'), 'Open');
  const events = await w.running.services.db('events').where({ type: 'issue' }).orderBy('id').pluck('action');
  t.same(events, ['opened', 'closed', 'reopened'], 'each step raised its event');
  t.equal(Number((await w.running.services.db('events').where({ type: 'comment' }).count({ n: '*' }))[0].n), 1, 'and the comment its own');
  await page.goto(`${w.url}/demo/widgets`);
  await Promise.all([page.waitForURL(`${w.url}/demo/widgets/issues/1`), page.click('main a:has-text("The <b>frame</b> wobbles")')]);
  t.pass('the repository page links to the issue');

  const opened = await w.api('POST', '/api/v1/repos/demo/widgets/pulls', {
    body: { title: 'Greet people', head: 'feature/greet', base: 'main', body: 'Two languages.' },
  });
  t.equal(opened.status, 201);
  await page.goto(`${w.url}/demo/widgets/pulls`);
  await expectAccessible(t, page, 'pulls');
  await Promise.all([page.waitForURL(`${w.url}/demo/widgets/pulls/2`), page.click('text=Greet people')]);
  const commits = await page.$$eval('#commits-heading + ul li', (lis) => lis.map((li) => li.textContent));
  t.equal(commits.length, 2, 'two commits');
  t.match(commits[0], 'Greet in English', 'oldest first');
  t.match(commits[1], 'Greet in Welsh too');
  t.ok(await page.isVisible(`a[href="/demo/widgets/commit/${opened.body.head.sha}"]`), 'each commit links to its page');
  const files = await page.$$eval('.files li', (lis) =>
    lis.map((li) => [li.querySelector('.path'), ...li.querySelectorAll('.added, .removed')].map((e) => e!.firstChild!.textContent).join(' ')),
  );
  t.same(files, ['frame.txt +1 −0', 'src/greet.txt +2 −0'], 'files changed with their counts');
  t.ok(await page.isVisible(`a[href="/demo/widgets/compare/${opened.body.base.sha}...${opened.body.head.sha}"]`), 'the full diff is on the compare page');
  t.match(await page.textContent('.merge-box'), 'Can be merged with a merge commit into main');
  await expectAccessible(t, page, 'pull');
  await page.goto(`${w.url}/demo/widgets/issues/2`);
  t.equal(page.url(), `${w.url}/demo/widgets/pulls/2`, "a pull request's number under issues opens the pull request");
  await page.goto(`${w.url}/demo/widgets/pulls/1`);
  t.equal(page.url(), `${w.url}/demo/widgets/issues/1`, "and an issue's under pulls the issue");

  await page.goto(`${w.url}/demo/widgets/pulls/2`);
  await page.click('button:has-text("Merge pull request")');
  await page.waitForSelector('.flash');
  t.match(await page.textContent('.flash'), 'Pull request #2 merged into main.');
  t.equal(await page.textContent('.thread-head .result'), 'Merged');
  t.notOk(await page.isVisible('button:has-text("Merge pull request")'), 'no button once merged');
  const merged = (await w.api('GET', '/api/v1/repos/demo/widgets/pulls/2')).body;
  t.ok(merged.merged, 'merged through the same operation');
  const remote = await g.ok(['ls-remote', repoUrl(w, 'demo/widgets', w.adminToken), 'refs/heads/main']);
  t.equal(remote.split('\t')[0], merged.merge_commit_sha, 'main moved to the merge commit');
  t.match(await page.textContent('.merge-box'), `Merged into main as ${merged.merge_commit_sha.slice(0, 7)}`);
  t.same(await page.$$eval('#commits-heading + ul li', (lis) => lis.length), 2, 'a merged pull request still lists its commits');
  await expectAccessible(t, page, 'pull-merged');
  await w.pushesRecorded();
  const pullEvents = await w.running.services.db('events').where({ type: 'pull_request' }).orderBy('id').pluck('action');
  t.same(pullEvents, ['opened', 'closed'], 'opened, then closed (merged)');
  t.ok(await w.running.services.db('events').where({ type: 'push', ref: 'refs/heads/main' }).whereRaw('id > 0').first(), 'and a push on main');
  await page.goto(`${w.url}/demo/widgets/pulls?state=merged`);
  t.match(await page.textContent('main .list'), 'Greet people', 'listed under Merged');
  await page.goto(`${w.url}/demo/widgets/pulls?state=open`);
  t.match(await page.textContent('main'), 'No open pull requests.');

  // Releases and pipelines reported through the API have their pages.
  t.equal(
    (await w.api('POST', '/api/v1/repos/demo/widgets/releases', { body: { tag_name: 'v1.0', name: 'First light', body: 'Greets.\nFrames.' } })).status,
    201,
  );
  t.equal((await w.api('POST', '/api/v1/repos/demo/widgets/releases', { body: { tag_name: 'v2.0-rc', name: 'Next', draft: true } })).status, 201);
  await page.goto(`${w.url}/demo/widgets/releases`);
  t.same(await page.$$eval('main .list a.strong', (as) => as.map((a) => a.textContent)), ['Next', 'First light'], 'newest first; members see drafts');
  await expectAccessible(t, page, 'releases');
  await page.click('text=First light');
  t.equal(page.url(), `${w.url}/demo/widgets/releases/tag/v1.0`);
  t.match(await page.textContent('main'), 'Greets.\nFrames.');
  await expectAccessible(t, page, 'release');
  t.equal((await w.api('POST', '/api/v1/repos/demo/widgets/releases', { body: { tag_name: 'lts/v1.1', name: 'Long term' } })).status, 201);
  await page.goto(`${w.url}/demo/widgets/releases`);
  await page.click('text=Long term');
  t.equal(page.url(), `${w.url}/demo/widgets/releases/tag/lts/v1.1`, 'a tag with a slash keeps it in the address');
  t.match(await page.textContent('main h2'), 'Long term');
  const pipeline = await w.api('POST', '/api/v1/repos/demo/widgets/pipelines', {
    body: { name: 'ci/build', ref: 'refs/heads/main', sha: merged.merge_commit_sha, status: 'running' },
  });
  t.equal(pipeline.status, 201);
  await page.goto(pipeline.body.url);
  t.match(await page.textContent('main h2'), 'ci/build');
  t.match(await page.textContent('main'), 'Running');
  t.ok(await page.isVisible(`a[href="/demo/widgets/commit/${merged.merge_commit_sha}"]`), 'the commit links to its page');
  await expectAccessible(t, page, 'pipeline');
  await page.goto(`${w.url}/demo/widgets/pipelines`);
  t.match(await page.textContent('main .list'), 'ci/build');
  await expectAccessible(t, page, 'pipelines');
});

t.test('outsiders see a public repository’s issues without forms; their forged posts change nothing; private pages are 404', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  await buildRepo(w, 'demo', 'secret', 'private');
  await pushHistory(t, w, 'demo/widgets');
  await pushHistory(t, w, 'demo/secret');
  for (const repo of ['widgets', 'secret']) {
    await w.api('POST', `/api/v1/repos/demo/${repo}/issues`, { body: { title: `Issue of ${repo}` } });
    await w.api('POST', `/api/v1/repos/demo/${repo}/pulls`, { body: { title: `Pull of ${repo}`, head: 'feature/greet', base: 'main' } });
    await w.api('POST', `/api/v1/repos/demo/${repo}/releases`, { body: { tag_name: 'v1.0', name: `Release of ${repo}` } });
    await w.api('POST', `/api/v1/repos/demo/${repo}/releases`, { body: { tag_name: 'v2.0', name: `Draft of ${repo}`, draft: true } });
    const sha = (await w.api('GET', `/api/v1/repos/demo/${repo}/pulls/2`)).body.head.sha;
    await w.api('POST', `/api/v1/repos/demo/${repo}/pipelines`, { body: { name: 'ci', ref: 'refs/heads/main', sha, status: 'success' } });
  }
  const outsider = await buildUser(w, 'olga', { org: 'other', role: 'owner' });
  const { browser, page } = await openBrowser(t);
  const anonymous = await (await browser.newContext()).newPage();
  await signIn(page, w, outsider.token);

  for (const [who, p] of [
    ['anonymous', anonymous],
    ['another organization’s owner', page],
  ] as const) {
    await p.goto(`${w.url}/demo/widgets/issues`);
    t.match(await p.textContent('main .list'), 'Issue of widgets', `${who} sees the public issues`);
    t.notOk(await p.isVisible('text=New issue'), `${who}: no New issue`);
    await p.goto(`${w.url}/demo/widgets/issues/1`);
    t.equal(await p.locator('main form').count(), 0, `${who}: no comment form, no Close button`);
    await p.goto(`${w.url}/demo/widgets/pulls/2`);
    t.match(await p.textContent('.merge-box'), 'Can be merged', `${who} sees the merge state`);
    t.equal(await p.locator('main form').count(), 0, `${who}: no Merge button, no forms`);
    await p.goto(`${w.url}/demo/widgets/releases`);
    t.same(await p.$$eval('main .list a.strong', (as) => as.map((a) => a.textContent)), ['Release of widgets'], `${who}: no drafts`);
    t.equal((await p.goto(`${w.url}/demo/widgets/releases/tag/v2.0`))!.status(), 404, `${who}: a draft's page is 404`);
    t.equal((await p.goto(`${w.url}/demo/widgets/issues/new`))!.status(), who === 'anonymous' ? 200 : 403, `${who}: the new-issue form is refused`);
    if (who === 'anonymous') t.match(p.url(), /\/-\/login\?next=/, 'anonymous is sent to sign in');
    if (who === 'anonymous') await expectAccessible(t, p, 'issue-public-anonymous');

    // Forged posts with the visitor's own valid CSRF token: refused by access, never acting.
    // (Signed out, the sign-in page's form carries the anonymous cookie's token.)
    await p.goto(`${w.url}${who === 'anonymous' ? '/-/login' : '/demo/widgets/issues/1'}`);
    const csrf = await csrfOf(p);
    const posts: Array<[string, Record<string, string>]> = [
      ['/demo/widgets/issues', { title: 'forged' }],
      ['/demo/widgets/issues/1/comments', { body: 'forged' }],
      ['/demo/widgets/pulls/2/comments', { body: 'forged' }],
      ['/demo/widgets/issues/1/state', { state: 'closed' }],
      ['/demo/widgets/pulls/2/state', { state: 'closed' }],
      ['/demo/widgets/pulls/2/merge', {}],
    ];
    for (const [url, fields] of posts) t.equal((await postAs(p, w.url + url, { _csrf: csrf, ...fields })).status, 403, `${who}: POST ${url} is 403`);
    for (const [url, fields] of posts) {
      const secretUrl = url.replace('widgets', 'secret');
      t.equal((await postAs(p, w.url + secretUrl, { _csrf: csrf, ...fields })).status, 404, `${who}: POST ${secretUrl} is 404`);
    }
    for (const url of ['issues', 'issues/1', 'issues/new', 'pulls', 'pulls/2', 'releases', 'releases/tag/v1.0', 'pipelines', 'pipelines/2']) {
      const res = await p.goto(`${w.url}/demo/secret/${url}`);
      const shown = await p.textContent('main');
      if (url === 'issues/new' && who === 'anonymous') t.match(p.url(), /\/-\/login/, `${who}: the private new-issue form asks to sign in`);
      else t.equal(res!.status(), 404, `${who}: /demo/secret/${url} is 404`);
      t.notMatch(shown, /of secret/, `${who}: nothing of the private repository shows`);
    }
  }
  const db = w.running.services.db;
  t.equal(Number((await db('comments').count({ n: '*' }))[0].n), 0, 'no comment was added');
  t.same(
    (await db('issues').orderBy('id').select('title', 'state')).map((r) => `${r.title}:${r.state}`),
    ['Issue of widgets:open', 'Pull of widgets:open', 'Issue of secret:open', 'Pull of secret:open'],
    'no issue opened or closed',
  );
  t.equal(Number((await db('pull_requests').where('merged', true).count({ n: '*' }))[0].n), 0, 'nothing merged');
  await expectAccessible(t, page, 'not-found-private');
});

t.test('bad numbers and tags are 404 pages, never errors', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  for (const url of [
    'issues/0',
    'issues/abc',
    'issues/99999999999',
    'issues/7',
    'pulls/-1',
    'pulls/1e3',
    'pipelines/0',
    'pipelines/5',
    'releases/tag/-rf',
    'releases/tag/nope',
  ]) {
    const res = await fetch(`${w.url}/demo/widgets/${url}`, { headers: { accept: 'text/html' } });
    t.equal(res.status, 404, `${url} is 404`);
  }
  const list = await fetch(`${w.url}/demo/widgets/issues?state=bogus&before=-3`);
  t.equal(list.status, 200, 'an unknown state or cursor shows the open list');

  // Lists come a page at a time, newest first, with a link to the older ones.
  for (let n = 1; n <= 27; n++) await w.api('POST', '/api/v1/repos/demo/widgets/issues', { body: { title: `Issue number ${n}` } });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/issues`);
  const titles = () => page.$$eval('main .list a.strong', (as) => as.map((a) => a.textContent));
  const first = await titles();
  t.same([first.length, first[0], first.at(-1)], [25, 'Issue number 27', 'Issue number 3'], 'the newest 25');
  await page.click('text=Older');
  t.same(await titles(), ['Issue number 2', 'Issue number 1'], 'then the rest');
  t.notOk(await page.isVisible('text=Older'), 'and no further link');

  // An empty comment is refused with a message, nothing added.
  await page.goto(`${w.url}/demo/widgets/issues/1`);
  await page.evaluate(() => document.querySelector('#comment-body')!.removeAttribute('required'));
  await page.fill('#comment-body', '  \n ');
  await page.click('button:has-text("Comment")');
  await page.waitForSelector('.flash.error');
  t.match(await page.textContent('.flash.error'), 'The comment was not added', 'an empty comment is refused');
  t.equal(Number((await w.running.services.db('comments').count({ n: '*' }))[0].n), 0, 'nothing added');
});

t.test('a pull request that cannot merge says why, as the API’s merge decides, and offers no button', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'widgets', 'public');
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'Start', { 'a.txt': 'one\n' });
  await g.ok(['checkout', '-q', '-b', 'clash'], { cwd: work });
  await g.commit(work, 'Say two', { 'a.txt': 'two\n' });
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  await g.commit(work, 'Say three', { 'a.txt': 'three\n' });
  await g.ok(['checkout', '-q', '--orphan', 'stranger'], { cwd: work });
  await g.commit(work, 'Elsewhere', { 'b.txt': 'b\n' });
  await g.ok(['push', '-q', repoUrl(w, 'demo/widgets', w.adminToken), 'main', 'clash', 'stranger'], { cwd: work });
  for (const head of ['clash', 'stranger']) await w.api('POST', '/api/v1/repos/demo/widgets/pulls', { body: { title: `From ${head}`, head } });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const cases: Array<[number, string]> = [
    [1, 'has conflicts with main'],
    [2, 'share no history'],
  ];
  for (const [number, why] of cases) {
    const res = await page.goto(`${w.url}/demo/widgets/pulls/${number}`);
    t.equal(res!.status(), 200, `#${number} shows`);
    t.match(await page.textContent('.merge-box'), why, `#${number}: ${why}`);
    t.notOk(await page.isVisible('button:has-text("Merge pull request")'), `#${number}: no Merge button`);
    const merge = await w.api('PUT', `/api/v1/repos/demo/widgets/pulls/${number}/merge`);
    t.equal(merge.status, 409, `#${number}: the API refuses the merge too`);
  }
  t.match(await page.textContent('main'), 'share no history: there is nothing to compare', 'no files to list');
  await expectAccessible(t, page, 'pull-unrelated');
  // A member closes it from its page; a merged one could not be reopened, a closed one can.
  await page.click('button:has-text("Close pull request")');
  await page.waitForSelector('.flash');
  t.equal(await page.textContent('.thread-head .result'), 'Closed');
  t.match(await page.textContent('.merge-box'), 'closed without being merged');
  await page.click('button:has-text("Reopen pull request")');
  await page.waitForSelector('.flash');
  t.equal(await page.textContent('.thread-head .result'), 'Open');
  t.same(await w.running.services.db('events').where({ type: 'pull_request' }).orderBy('id').pluck('action'), ['opened', 'opened', 'closed', 'reopened']);
});
