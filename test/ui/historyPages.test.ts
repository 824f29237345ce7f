import t from 'tap';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { buildRepo, buildUser, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl, type GitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { repoDir } from '../../src/git/bare.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';
import { startReceiver } from './receiver.ts';

/** GET a path exactly as written (no `..` folded away by a URL parser): status and body. */
function rawGet(w: TestWharf, rawPath: string, cookie = ''): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(w.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ hostname, port, path: rawPath, headers: { accept: 'text/html', cookie } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** A work tree with a history: a rename, a binary file, a merge, a long line, a branch `feature/x`, an unmerged `topic` and a tag. */
async function buildHistory(g: GitClient): Promise<string> {
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'Add the README', { 'README.md': '# Widgets\n' });
  await g.ok(['tag', 'v0.1'], { cwd: work });
  await g.commit(work, 'Add the <widget> frame', { 'src/widget.ts': 'export const one = 1;\nexport const two = 2;\nexport const three = 3;\n' });
  await g.ok(['checkout', '-q', '-b', 'feature/x'], { cwd: work });
  await g.ok(['mv', 'src/widget.ts', 'src/gadget.ts'], { cwd: work });
  await g.commit(work, 'Rename the widget to a gadget', {
    'src/gadget.ts': 'export const one = 1;\nexport const two = 2;\nexport const three = 3;\nexport const four = 4;\n',
  });
  await g.commit(work, 'Add the logo', { 'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0, 0, 255]) });
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  await g.commit(work, 'Explain the widgets', { 'README.md': '# Widgets\n\nThey spin.\n' });
  await g.ok(['merge', '-q', '--no-ff', '-m', 'Merge feature/x', 'feature/x'], { cwd: work });
  await g.commit(work, 'Add a long line', { 'long.txt': `${'wide '.repeat(600)}\n` });
  await g.ok(['tag', '-a', 'v1.0', '-m', 'The first release'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'topic', 'v0.1'], { cwd: work });
  await g.commit(work, 'Topic work', { 'topic.txt': 'only on topic\n' });
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  return work;
}

t.test('a team follows its history: the log, a commit and its diff, a merge, compare, branches and tags', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s' } });
  await buildRepo(w, 'demo', 'widgets', 'private');
  const receiver = await startReceiver(t);
  const hook = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/ok`, events: ['push'] } });
  t.equal(hook.status, 201);
  const g = gitClient(t);
  const work = await buildHistory(g);
  await g.ok(['push', '-q', repoUrl(w, 'demo/widgets', w.adminToken), 'main', 'feature/x', 'topic', 'v0.1', 'v1.0'], { cwd: work });
  await w.pushesRecorded();

  const { page } = await openBrowser(t);
  await signIn(page, w);

  // Every commit link of the push payloads lands on its commit's page.
  const pushes = await waitFor(() => {
    const found = receiver.hits.filter((h) => h.headers['x-service-event'] === 'push').map((h) => JSON.parse(h.body.toString()));
    return found.length >= 5 && found;
  });
  let links = 0;
  for (const payload of pushes) {
    for (const commit of [...payload.commits, payload.head_commit].filter(Boolean)) {
      t.match(commit.url, new RegExp(`^${w.url}/demo/widgets/commit/[0-9a-f]{40}$`));
      const res = await page.goto(commit.url);
      t.equal(res!.status(), 200, `${commit.url} answers`);
      t.match(await page.textContent('.commit-subject'), commit.message.split('\n')[0], 'with the commit subject');
      links++;
    }
  }
  t.ok(links >= 9, `every commit link of every push payload was followed (${links})`);

  // The repository page links to commits and refs.
  await page.goto(`${w.url}/demo/widgets`);
  t.ok(await page.isVisible('a[href="/demo/widgets/tree/feature/x"]'), 'a branch links to its tree');
  t.ok(await page.isVisible('a[href="/demo/widgets/tree/v1.0"]'), 'a tag links to its tree');
  // From the log to a commit to its diff.
  await page.click('nav.tabs a:has-text("Commits")');
  await page.waitForURL(`${w.url}/demo/widgets/commits/main`);
  const subjects = await page.$$eval('.commits li a', (as) => as.map((a) => a.textContent));
  t.same(
    subjects,
    ['Add a long line', 'Merge feature/x', 'Explain the widgets', 'Add the logo', 'Rename the widget to a gadget', 'Add the <widget> frame', 'Add the README'],
    'newest first',
  );
  await expectAccessible(t, page, 'history-commits');
  await page.click('.commits a:has-text("Add the <widget> frame")');
  await page.waitForURL(/\/demo\/widgets\/commit\/[0-9a-f]{40}$/);
  t.match(await page.textContent('.commit-subject'), 'Add the <widget> frame');
  t.match(await page.textContent('.files'), /Added\s*src\/widget\.ts\s*\+3 −0/, 'the changed file with its counts');
  const added = await page.$$eval('.diff tr.add', (rows) => rows.map((r) => Array.from(r.children).map((c) => c.textContent)));
  t.same(added, [
    ['', '1', '+export const one = 1;'],
    ['', '2', '+export const two = 2;'],
    ['', '3', '+export const three = 3;'],
  ]);
  t.match(await page.textContent('.commit dl'), /Parent\s*[0-9a-f]{7}/);

  // The rename, the binary file, the merge.
  await page.goto(`${w.url}/demo/widgets/commits/feature/x`);
  await page.click('.commits a:has-text("Rename the widget")');
  t.match(await page.textContent('.files'), /Renamed\s*src\/widget\.ts → src\/gadget\.ts\s*\+1 −0/);
  t.match(await page.textContent('.diff-file'), 'similarity index');
  t.same(await page.$$eval('.diff tr.add .code', (c) => c.map((x) => x.textContent)), ['+export const four = 4;']);
  t.same(await page.$$eval('.diff tr.context .ln', (c) => c.map((x) => x.textContent)).then((n) => n.slice(0, 2)), ['1', '1'], 'old and new line numbers');
  await page.goto(`${w.url}/demo/widgets/commits/feature/x`);
  await page.click('.commits a:has-text("Add the logo")');
  t.match(await page.textContent('.files'), /Added\s*logo\.png\s*Binary/);
  t.match(await page.textContent('.diff-file'), 'Binary file added');
  await page.goto(`${w.url}/demo/widgets/commits/main`);
  await page.click('.commits a:has-text("Merge feature/x")');
  t.match(await page.textContent('.commit'), 'A merge of 2 parents: the changes are shown against the first parent');
  t.equal(await page.locator('.commit dl a').count(), 2, 'two parents, each a link');
  t.match(await page.textContent('.files'), /logo\.png[\s\S]*src\/gadget\.ts/, 'what the merge brought to main');
  await page.click('.commit dl dd a >> nth=0');
  t.match(await page.textContent('.commit-subject'), 'Explain the widgets', 'the first parent');

  // A long line scrolls inside its box, not the page.
  await page.goto(`${w.url}/demo/widgets/commit/main`);
  t.match(await page.textContent('.commit-subject'), 'Add a long line', 'a branch name is a commit page too');
  await expectAccessible(t, page, 'history-commit');

  // Compare a branch with main: its commit and its change since the two parted.
  await page.goto(`${w.url}/demo/widgets/branches`);
  t.same(
    await page.$$eval('.refs-list a.ref', (as) => as.map((a) => a.textContent)),
    ['main', 'topic', 'feature/x'],
    'the default branch first, then newest first',
  );
  t.equal(await page.getAttribute('.refs-list a.ref >> nth=2', 'href'), '/demo/widgets/tree/feature/x');
  await expectAccessible(t, page, 'history-branches');
  await page.fill('#ref-q', 'FEAT');
  await page.click('.ref-filter button');
  t.same(await page.$$eval('.refs-list a.ref', (as) => as.map((a) => a.textContent)), ['feature/x'], 'filtered by name');
  await page.goto(`${w.url}/demo/widgets/branches`);
  await page.click('.refs-list li:has-text("topic") a:has-text("Compare")');
  await page.waitForURL(`${w.url}/demo/widgets/compare/main...topic`);
  t.same(await page.$$eval('.commits li a', (as) => as.map((a) => a.textContent)), ['Topic work']);
  t.match(await page.textContent('.files'), /Added\s*topic\.txt\s*\+1 −0/, 'the change since the merge base, not the whole difference');
  t.equal(await page.locator('.files li').count(), 1);
  await expectAccessible(t, page, 'history-compare');
  const twoDots = await page.goto(`${w.url}/demo/widgets/compare/main..topic`);
  t.equal(twoDots!.status(), 200);
  t.match(await page.textContent('.files'), 'long.txt', 'two dots: the diff between the two tips');
  await page.goto(`${w.url}/demo/widgets/compare`);
  await page.fill('input[name=head]', 'feature/x');
  await page.fill('input[name=base]', 'v0.1');
  await page.click('.compare-form button');
  await page.waitForURL(`${w.url}/demo/widgets/compare/v0.1...feature/x`);
  t.same(
    await page.$$eval('.commits li a', (as) => as.map((a) => a.textContent)),
    ['Add the <widget> frame', 'Rename the widget to a gadget', 'Add the logo'],
    'oldest first',
  );

  await page.goto(`${w.url}/demo/widgets/tags`);
  t.same(await page.$$eval('.refs-list a.ref', (as) => as.map((a) => a.textContent)), ['v1.0', 'v0.1']);
  await expectAccessible(t, page, 'history-tags');
  await page.click('.refs-list li:has-text("v1.0") a:has(code)');
  t.match(await page.textContent('.commit-subject'), 'Add a long line', 'an annotated tag links to its commit');
});

t.test('paging: 50 commits a page, Older and Newer', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'long', 'public');
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  // 120 commits in one fast-import stream rather than 120 runs of git.
  let stream = '';
  for (let i = 1; i <= 120; i++)
    stream += `commit refs/heads/main\ncommitter Ada <ada@example.com> ${1_700_000_000 + i} +0000\ndata <<EOM\nCommit ${i}\nEOM\n${i > 1 ? '' : ''}M 644 inline f.txt\ndata <<EOM\n${i}\nEOM\n\n`;
  await g.ok(['fast-import', '--quiet'], { cwd: work, input: stream });
  await g.ok(['push', '-q', repoDir(w.config.reposDir, 'demo', 'long'), 'main'], { cwd: work });
  const { page } = await openBrowser(t);
  await page.goto(`${w.url}/demo/long/commits/main`);
  const rows = () => page.$$eval('.commits li a', (as) => as.map((a) => a.textContent));
  let shown = await rows();
  t.equal(shown.length, 50);
  t.equal(shown[0], 'Commit 120');
  t.notOk(await page.isVisible('a[rel=prev]'), 'no Newer on the first page');
  await page.click('a[rel=next]');
  await page.waitForURL(`${w.url}/demo/long/commits/main?page=2`);
  shown = await rows();
  t.equal(shown[0], 'Commit 70', 'page 2 starts with the 51st');
  t.equal(shown.length, 50);
  await page.click('a[rel=next]');
  shown = await rows();
  t.same([shown.length, shown[0], shown.at(-1)], [20, 'Commit 20', 'Commit 1']);
  t.notOk(await page.isVisible('a[rel=next]'), 'no Older on the last page');
  await page.click('a[rel=prev]');
  t.equal((await rows())[0], 'Commit 70');
  t.equal((await page.goto(`${w.url}/demo/long/commits/main?page=4`))!.status(), 404, 'past the end');
  t.equal((await page.goto(`${w.url}/demo/long/commits/main?page=abc`))!.status(), 404);
  // The commits of a commit id.
  await page.goto(`${w.url}/demo/long/commits/main?page=2`);
  await page.click('.commits a:has-text("Commit 70")');
  const sha = page.url().split('/').at(-1)!;
  await page.goto(`${w.url}/demo/long/commits/${sha.slice(0, 10)}`);
  t.equal((await rows())[0], 'Commit 70', 'an abbreviated id has a history too');
});

t.test('a huge commit is shown bounded, with what was left out said', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'huge', 'public');
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  const many: Record<string, string> = {};
  for (let i = 0; i < 400; i++) many[`files/f${String(i).padStart(3, '0')}.txt`] = `file ${i}\nline two\n`;
  const wide = await g.commit(work, 'Four hundred files', many);
  const line = 'x'.repeat(49);
  fs.writeFileSync(path.join(work, 'big.txt'), `${line}\n`.repeat(200_000)); // 10 MB
  await g.ok(['add', 'big.txt'], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'Ten megabytes of text'], { cwd: work });
  await g.ok(['push', '-q', repoDir(w.config.reposDir, 'demo', 'huge'), 'main'], { cwd: work });

  const timed = async (p: string) => {
    const start = Date.now();
    const res = await fetch(`${w.url}${p}`);
    const body = await res.text();
    return { status: res.status, body, ms: Date.now() - start };
  };
  const many400 = await timed(`/demo/huge/commit/${wide}`);
  t.equal(many400.status, 200);
  t.ok(many400.ms < 5000, `answered in ${many400.ms} ms`);
  t.match(many400.body, '400 files changed');
  t.equal(many400.body.match(/class="diff-file"/g)?.length, 300, 'the diffs of 300 files');
  t.match(many400.body, 'files/f399.txt', 'every file is still listed');
  t.match(many400.body, 'The diff is too large to show in full; 100 more files are listed above without their changes');

  const big = await timed('/demo/huge/commit/main');
  t.equal(big.status, 200);
  t.ok(big.ms < 5000, `answered in ${big.ms} ms`);
  t.match(big.body, /Added\s*<\/span>\s*<span class="path">big\.txt/);
  t.match(big.body, '+200000', 'the full count from numstat');
  t.match(big.body, 'the changes of the last file shown are cut');
  t.ok(big.body.length < 3_000_000, `the page stays small (${big.body.length} bytes)`);
  t.ok((big.body.match(/<tr class="add">/g)?.length ?? 0) <= 5000, 'at most 5,000 lines');
});

t.test('addresses that escape or name nothing are 404 pages; private history is 404 to others', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'open', 'public');
  await buildRepo(w, 'demo', 'secret', 'private');
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  const sha = await g.commit(work, 'Secret plans', { 'plans.txt': 'hidden\n' });
  await g.ok(['branch', 'feature/x'], { cwd: work });
  await g.ok(['tag', 'v1'], { cwd: work });
  for (const name of ['open', 'secret']) await g.ok(['push', '-q', repoDir(w.config.reposDir, 'demo', name), 'main', 'feature/x', 'v1'], { cwd: work });

  for (const bad of [
    'commits/..',
    'commits/main/../main',
    'commits/%2E%2E',
    'commits/-n',
    'commits/--all',
    'commits/nope',
    'commit/-n',
    'commit/..%2F..%2F..%2Fetc',
    'commit/0000000000000000000000000000000000000000',
    'commit/deadbeef',
    'compare/main...-n',
    'compare/main...nope',
    'commits/main?page=0',
    'branches?page=9',
  ]) {
    const res = await rawGet(w, `/demo/open/${bad}`);
    t.equal(res.status, 404, `${bad} is a 404`);
    t.match(res.body, '<h1>Not found</h1>', `${bad}: the 404 page`);
  }
  await buildRepo(w, 'demo', 'empty', 'public');
  const empty = await rawGet(w, '/demo/empty/commits/main');
  t.equal(empty.status, 404, 'the Commits tab of an empty repository');
  t.match(empty.body, 'demo/empty is empty: nothing has been pushed to it yet.');
  t.match((await rawGet(w, '/demo/empty/branches')).body, 'No branches.');
  // Not written base...head: a 404 with the form that writes it.
  for (const bad of ['compare/..', 'compare/main', 'compare/...main']) {
    const res = await rawGet(w, `/demo/open/${bad}`);
    t.equal(res.status, 404, `${bad} is a 404`);
    t.match(res.body, 'A comparison is written base...head', `${bad}: says how to write one`);
  }
  // A NUL or bytes that are not UTF-8 name nothing: a 404 site-wide before any page runs (http/inputGuard.ts).
  for (const bad of ['commits/%00', 'commits/main%00', 'commit/%ff', 'compare/main...%00']) {
    const res = await rawGet(w, `/demo/open/${bad}`);
    t.equal(res.status, 404, `${bad} is not found`);
  }
  const other = await buildUser(w, 'olga', { org: 'rivals', role: 'owner' });
  const { page } = await openBrowser(t);
  await signIn(page, w, other.token);
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  for (const p of ['commits/main', `commit/${sha}`, 'compare/v1...feature/x', 'compare', 'branches', 'tags', 'commits']) {
    const anonymous = await rawGet(w, `/demo/secret/${p}`);
    const rival = await rawGet(w, `/demo/secret/${p}`, cookie);
    const missing = await rawGet(w, `/demo/nothing-here/${p}`, cookie);
    t.equal(anonymous.status, 404, `${p}: 404 to anonymous visitors`);
    t.equal(rival.status, 404, `${p}: 404 to another organization's owner`);
    const scrub = (s: string) => s.replace(/name="_csrf" value="[^"]*"/, '');
    t.equal(scrub(rival.body.replace(/secret/g, 'X')), scrub(missing.body.replace(/nothing-here/g, 'X')), `${p}: as if it did not exist`);
    t.notMatch(anonymous.body + rival.body, 'Secret plans');
    t.equal((await rawGet(w, `/demo/open/${p}`, cookie)).status, p === 'commits' ? 302 : 200, `${p} of a public repository is shown`);
  }
});
