import t from 'tap';
import { buildRepo, buildUser } from '../helpers/wharf.ts';
import { expectAccessible } from './audit.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { pushCodeFixture, pushForeignPointer, sessionCookie } from './codeFixture.ts';

t.test('a member browses the code: repository page, folders, files of every kind, branches, tags and commits', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'widgets', 'private');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const fx = await pushCodeFixture(t, w, 'acme/widgets', ann.token);
  const { browser, page } = await openBrowser(t);
  await signIn(page, w, ann.token);

  // The repository page: the root folder of main, folders first, and the README rendered.
  await page.goto(`${w.url}/acme/widgets`);
  const names = await page.$$eval('.files .file-row > :first-child', (els) => els.map((e) => e.textContent!.trim()));
  t.same(
    names,
    ['docs/', 'img/', 'src/', 'vendor/', '.gitattributes', '.gitmodules', 'README.md', 'big.txt', 'evil.html', 'evil.svg', 'model.bin'],
    'folders first, then files',
  );
  t.match(await page.textContent('.readme .markdown h3'), 'Widgets', 'the README is rendered (its h1 under the page outline)');
  t.equal(
    await page.getAttribute('.readme a:text("the guide")', 'href'),
    '/acme/widgets/blob/main/docs/guide.md',
    'a relative link opens the file at this ref',
  );
  t.equal(await page.getAttribute('.readme img', 'src'), '/acme/widgets/raw/main/img/logo.png', 'a relative image loads the raw bytes');
  await page.waitForFunction(() => (document.querySelector('.readme img') as HTMLImageElement).complete);
  t.equal(await page.$eval('.readme img', (img) => (img as HTMLImageElement).naturalWidth), 1, 'and the image shows');
  t.match(await page.textContent('.readme'), '<script>window.pwned = 1</script> stays text.', 'raw HTML in Markdown is text');
  t.equal(await page.$$eval('.readme a', (as) => as.filter((a) => /^javascript:/i.test(a.getAttribute('href') ?? '')).length), 0, 'no javascript: link');
  t.equal(await page.evaluate(() => (window as any).pwned), undefined, 'nothing ran');
  t.match(await page.textContent('main'), 'Recent commits', 'the rest of the page is still there');
  await expectAccessible(t, page, 'code-repo');

  // A relative link to a folder lands on its tree page (blob/ sends a folder to tree/).
  await Promise.all([page.waitForURL(`${w.url}/acme/widgets/tree/main/docs`), page.click('.readme a:text("the docs folder")')]);
  t.match(await page.textContent('.code-ref'), 'Branch main', 'the ref is shown');
  t.same(await page.$$eval('.code-path li', (lis) => lis.map((li) => li.textContent)), ['widgets', 'docs'], 'the path as a trail');
  t.match(await page.textContent('.readme h2'), 'README.md', "the folder's README below its listing");
  t.equal(await page.getAttribute('.readme a:text("the top")', 'href'), '/acme/widgets/blob/main/README.md', '../ resolves against the folder');
  await expectAccessible(t, page, 'code-tree');

  // A Markdown file: rendered, with its source a click away.
  await Promise.all([page.waitForURL(`${w.url}/acme/widgets/blob/main/docs/guide.md`), page.click('.files a:text("guide.md")')]);
  t.match(await page.textContent('.blob .markdown em'), 'guide');
  t.equal(await page.getAttribute('.blob .markdown a', 'href'), '/acme/widgets/blob/main/README.md', 'a link from / starts at the root');
  await expectAccessible(t, page, 'code-blob-markdown');
  t.same(
    await page.$$eval('.blob .markdown :is(h3, h4, h5)', (hs) => hs.map((h) => `${h.tagName} ${h.textContent}`)),
    ['H3 Guide', 'H4 Details'],
    'headings that start at ## and skip a level fit the page outline',
  );
  await Promise.all([page.waitForURL(/plain=1$/), page.click('.blob-views a:text("Source")')]);
  t.equal(await page.textContent('#L1'), '## Guide', 'the source with line numbers');

  // Text: escaped, numbered lines; a long line scrolls inside its box, never the page.
  await page.goto(`${w.url}/acme/widgets/blob/main/src/main.ts`);
  t.equal(await page.textContent('#L1'), "export const greeting = '<b>hello</b>';", 'text is shown, never markup');
  t.equal(await page.$$eval('pre.code .line', (ls) => ls.length), 3, 'three lines');
  t.match(await page.textContent('.blob-head'), /\d+ bytes · 3 lines/);
  await page.setViewportSize({ width: 375, height: 800 });
  const box = await page.$eval('pre.code', (pre) => ({ scroll: pre.scrollWidth, client: pre.clientWidth, page: document.documentElement.scrollWidth }));
  t.ok(box.scroll > box.client, 'the code box scrolls sideways');
  t.ok(box.page <= 375, 'the page does not');
  await expectAccessible(t, page, 'code-blob-text');

  // Binary, too large, LFS: described, with a raw link instead.
  await page.goto(`${w.url}/acme/widgets/blob/main/img/logo.png`);
  t.match(await page.textContent('.blob-note'), 'Binary file not shown');
  t.equal(await page.getAttribute('.blob-note a', 'href'), '/acme/widgets/raw/main/img/logo.png');
  await expectAccessible(t, page, 'code-blob-binary');
  await page.goto(`${w.url}/acme/widgets/blob/main/big.txt`);
  t.match(await page.textContent('.blob-note'), 'This file is 1.5 MiB, more than the 1.0 MiB a page shows');
  t.equal((await page.$$('pre.code')).length, 0, 'its text is not on the page');
  await expectAccessible(t, page, 'code-blob-large');
  await page.goto(`${w.url}/acme/widgets/blob/main/model.bin`);
  t.match(await page.textContent('.blob-note'), 'Stored with Git LFS');
  t.match(await page.textContent('.blob-head'), '64.0 KiB', "the object's size");
  t.match(await page.textContent('.blob-note'), 'Download model.bin');
  t.match(await page.textContent('.blob'), `sha256:${fx.lfsOid}`);
  await expectAccessible(t, page, 'code-blob-lfs');
  const cookie = await sessionCookie(browser, w, ann.token);
  const lfs = await fetch(`${w.url}/acme/widgets/raw/main/model.bin`, { headers: { cookie } });
  t.equal(lfs.status, 200);
  t.ok(Buffer.from(await lfs.arrayBuffer()).equals(fx.lfsContent), 'the raw link streams the LFS object');
  t.match(lfs.headers.get('content-disposition'), /^attachment; filename="model.bin"/);

  // A submodule: its URL at its commit, not a link into this repository.
  await page.goto(`${w.url}/acme/widgets/tree/main/vendor`);
  const row = (await page.textContent('.files .file-row'))!;
  t.match(row, /lib @ 0123456 submodule/);
  t.equal(await page.getAttribute('.files .file-row a', 'href'), 'https://example.com/lib.git');

  // Branches with a slash, tags, commits; a file's address under tree/ goes to blob/ and back.
  await page.goto(`${w.url}/acme/widgets/tree/feature/x`);
  t.match(await page.textContent('.code-ref'), 'Branch feature/x');
  await Promise.all([page.waitForURL(`${w.url}/acme/widgets/blob/feature/x/feature.txt`), page.click('.files a:text("feature.txt")')]);
  t.equal(await page.textContent('#L1'), 'only on feature/x');
  await page.goto(`${w.url}/acme/widgets/tree/v1.0/src`);
  t.match(await page.textContent('.code-ref'), 'Tag v1.0');
  await page.goto(`${w.url}/acme/widgets/tree/${fx.main.slice(0, 10)}`);
  t.match(await page.textContent('.code-ref'), `Commit ${fx.main.slice(0, 7)}`);
  t.notOk(await page.isVisible('.files a:text("feature.txt")'), 'the commit shows its own files');
  await page.goto(`${w.url}/acme/widgets/tree/main/README.md`);
  t.equal(page.url(), `${w.url}/acme/widgets/blob/main/README.md`, 'tree/ of a file redirects to blob/');
  await page.goto(`${w.url}/acme/widgets/blob/main/src`);
  t.equal(page.url(), `${w.url}/acme/widgets/tree/main/src`, 'blob/ of a folder redirects to tree/');
  t.equal((await page.goto(`${w.url}/acme/widgets/tree/nope`))!.status(), 404, 'an unknown ref');
  t.equal((await page.goto(`${w.url}/acme/widgets/blob/main/nope.txt`))!.status(), 404, 'a missing path');
  t.match(await page.textContent('main h1'), 'Not found');
});

t.test('an LFS object linked only to another repository is never served through this one', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'widgets', 'private');
  await buildRepo(w, 'rival', 'loot', 'private');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const bob = await buildUser(w, 'bob', { org: 'rival', role: 'owner' });
  const fx = await pushCodeFixture(t, w, 'acme/widgets', ann.token);
  await pushForeignPointer(t, w, 'rival/loot', bob.token, fx.lfsOid, fx.lfsContent.length);
  t.equal(await w.running.services.lfs.size(fx.lfsOid), fx.lfsContent.length, 'the store holds the bytes');
  const { browser, page } = await openBrowser(t);
  await signIn(page, w, bob.token);
  await page.goto(`${w.url}/rival/loot/blob/main/loot.bin`);
  t.match(await page.textContent('.blob-note'), 'Stored with Git LFS');
  t.match(await page.textContent('.blob-note'), 'Missing');
  t.equal((await page.$$('.blob-note a')).length, 0, 'no download link');
  const cookie = await sessionCookie(browser, w, bob.token);
  const raw = await fetch(`${w.url}/rival/loot/raw/main/loot.bin`, { headers: { cookie } });
  t.equal(raw.status, 404, "the other repository's object is not served");
  t.notOk(Buffer.from(await raw.arrayBuffer()).includes(fx.lfsContent.subarray(0, 64)), 'none of its bytes');
  // Even the site administrator, who may read both, gets it only through the repository it belongs to.
  const admin = await sessionCookie(browser, w, w.adminToken);
  t.equal((await fetch(`${w.url}/rival/loot/raw/main/loot.bin`, { headers: { cookie: admin } })).status, 404);
  t.equal((await fetch(`${w.url}/acme/widgets/raw/main/model.bin`, { headers: { cookie: admin } })).status, 200);
});
