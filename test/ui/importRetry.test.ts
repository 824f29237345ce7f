import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { gitClient } from '../helpers/git.ts';
import { buildUser } from '../helpers/wharf.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { addBulk, startProxy } from '../import/helpers.ts';

/** The smallest computed font size of any element in <main> that holds text of its own. */
function smallestText(page: Page): Promise<number> {
  return page.evaluate(() => {
    let min = Infinity;
    for (const el of document.querySelectorAll('main *')) {
      const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim());
      const box = (el as HTMLElement).getBoundingClientRect();
      if (own && box.width > 1 && box.height > 1) min = Math.min(min, parseFloat(getComputedStyle(el).fontSize));
    }
    return min;
  });
}

/** The levels of the page's headings, in order. */
function headingLevels(page: Page): Promise<number[]> {
  return page.$$eval('main h1, main h2, main h3, main h4', (els) => els.map((e) => Number(e.tagName[1])));
}

const inOrder = (levels: number[]) => levels[0] === 1 && levels.every((l, i) => i === 0 || l <= levels[i - 1] + 1);

t.test('a failed import says why, a retry with the same settings succeeds once the source is fixed, the history lists both', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'trunk', work]);
  await g.commit(work, 'First');
  await g.ok(['tag', 'v1'], { cwd: work });
  await g.ok(['branch', 'feature'], { cwd: work });
  await g.commit(work, 'Second');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  const daemon = await startGitDaemon(t, served);
  const secret = 'hunter2-never-shown';

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/-/import`);
  await page.fill('#url', daemon.url('tool'));
  await page.click('summary:has-text("Credentials")');
  await page.fill('#username', 'me');
  await page.fill('#password', secret);
  await page.check('input[name=visibility][value=public]');
  await page.click('summary:has-text("LFS endpoint")');
  await page.fill('#lfs_url', 'http://127.0.0.1:9/tool.git/info/lfs');
  await page.check('#mirror');
  await page.fill('#mirror_interval', '2h');
  await page.click('button:has-text("Begin import")');
  const firstUrl = page.url();
  const firstId = Number(/\/-\/import\/(\d+)$/.exec(firstUrl)![1]);
  await page.waitForSelector('text=Import failed', { timeout: 60_000 });
  await expectAccessible(t, page, 'import-retry-failed');
  t.equal((await page.textContent('[data-field=reason]'))!.trim(), 'The repository was not found at the source.', 'the reason in one sentence');
  t.equal(await page.getAttribute('details.git-message', 'open'), null, "git's words are folded away");
  t.match(await page.textContent('details.git-message pre'), /repository|not found/i, "git's words are under it");
  t.match(await page.getByRole('status').textContent(), 'Import failed: The repository was not found at the source.', 'the live region reads out the result');
  const settings = (await page.textContent('.import-settings'))!.replace(/\s+/g, ' ');
  for (const text of [daemon.url('tool'), 'with the credentials given before', 'demo/tool, public', 'http://127.0.0.1:9/tool.git/info/lfs', 'synced every 2 h'])
    t.match(settings, text, `the retry keeps: ${text}`);
  t.notOk((await page.content()).includes(secret), 'the credentials are not in the page');
  t.ok(inOrder(await headingLevels(page)), 'headings in order');
  t.ok((await smallestText(page)) >= 13, 'no text under 13px');

  // The source is fixed: the repository now exists there.
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'tool.git')]);
  // A second tab still shows the failed job's button.
  const stale = await page.context().newPage();
  await stale.goto(firstUrl);
  await page.click('button:has-text("Retry with the same settings")');
  await page.waitForURL(/\/-\/import\/\d+$/);
  const retryId = Number(/\/-\/import\/(\d+)$/.exec(page.url())![1]);
  t.not(retryId, firstId, 'a new job');
  await page.waitForSelector('text=Import finished', { timeout: 60_000 });
  await screenshot(page, 'import-retry-done');
  const fact = async (field: string) => (await page.textContent(`[data-field=${field}]`))!.trim();
  t.same(
    { commits: await fact('commits'), branches: await fact('branches'), tags: await fact('tags'), lfs: await fact('lfs') },
    { commits: '2', branches: '2', tags: '1', lfs: '0' },
  );
  t.match(await fact('size'), /^\d+(\.\d)? (bytes|KiB)$/);
  t.match(await fact('duration'), /^\d+(\.\d)? s$/);
  t.match(await page.getByRole('status').textContent(), /Import finished: 2 commits in \d+(\.\d)? s\./);
  t.match(await page.textContent('main'), `retry of import #${firstId}`);
  t.ok(inOrder(await headingLevels(page)), 'headings in order');
  t.ok((await smallestText(page)) >= 13, 'no text under 13px');
  const repo = await w.api('GET', '/api/v1/repos/demo/tool');
  t.equal(repo.body.visibility, 'public', 'the visibility of the first request');
  t.equal(repo.body.mirror?.interval, '2h', 'still a mirror, synced as first asked');
  const first = await w.api('GET', `/api/v1/repos/import/${firstId}`);
  t.equal(first.body.error_code, 'not_found');
  t.equal((await w.api('GET', `/api/v1/repos/import/${retryId}`)).body.lfs_url, 'http://127.0.0.1:9/tool.git/info/lfs', 'the LFS endpoint came along');

  // Retrying it again from the stale tab is refused, with the reason on the failed job's page.
  await stale.click('button:has-text("Retry with the same settings")');
  await stale.waitForURL(firstUrl);
  t.match(await stale.textContent('.flash.error[role=alert]'), `Could not retry: Import ${firstId} was already retried as import ${retryId}`);
  await stale.close();

  // The failed job's page now points to its retry.
  await page.goto(firstUrl);
  t.match(await page.textContent('main'), `Retried as import #${retryId}`);
  t.equal(await page.$('button:has-text("Retry with the same settings")'), null, 'no second retry');

  // The breadcrumb leads to the organization's import history: newest first.
  await page.click('nav.crumbs a:has-text("Imports")');
  await page.waitForURL(`${w.url}/-/orgs/demo/imports`);
  await expectAccessible(t, page, 'import-history');
  const rows = await page.$$eval('[data-import]', (els) => els.map((e) => [Number((e as HTMLElement).dataset.import), e.textContent!.replace(/\s+/g, ' ')]));
  t.same(
    rows.map((r) => r[0]),
    [retryId, firstId],
    'both jobs, newest first',
  );
  t.match(rows[0][1], /demo\/tool Succeeded From git:\/\/127\.0\.0\.1:\d+\/tool\.git Started \d{4}-\d\d-\d\d [\d:]+ UTC · took [\d.]+ s · retry of #\d+/);
  t.match(rows[1][1], /demo\/tool Failed .* · The repository was not found at the source\./);
  t.notOk((await page.content()).includes(secret), 'no credentials in the history');
  t.ok(inOrder(await headingLevels(page)), 'headings in order');
  t.ok((await smallestText(page)) >= 13, 'no text under 13px');
  await page.click(`a[href="/-/import/${firstId}"] >> nth=0`);
  await page.waitForURL(firstUrl);

  // The organization's page links to it for its owners.
  await page.goto(`${w.url}/demo`);
  t.equal(await page.getAttribute('a:has-text("Imports")', 'href'), '/-/orgs/demo/imports');

  // Only owners (and site admins) see it.
  const { token: member } = await buildUser(w, 'mona', { org: 'demo', role: 'member' });
  const { token: outsider } = await buildUser(w, 'otto', { org: 'elsewhere', role: 'owner' });
  const { browser } = await openBrowser(t);
  for (const [token, status] of [
    [member, 403],
    [outsider, 404],
  ] as const) {
    const other = await (await browser.newContext()).newPage();
    await signIn(other, w, token);
    const answer = await other.goto(`${w.url}/-/orgs/demo/imports`);
    t.equal(answer!.status(), status, `${status} for a ${token === member ? 'member' : 'stranger'}`);
    t.notOk((await other.content()).includes('tool.git'), 'no job shown');
    await other.goto(`${w.url}/demo`);
    t.equal(await other.$('a[href="/-/orgs/demo/imports"]'), null, 'no link to it');
  }
});

t.test('a running import: a named progress bar and a live region for its phase', async (t) => {
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.close();
  });
  const port = (silent.address() as net.AddressInfo).port;
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/-/import`);
  await page.fill('#url', `git://127.0.0.1:${port}/stuck.git`);
  await page.click('button:has-text("Begin import")');
  const bar = page.getByRole('progressbar', { name: 'Import progress' });
  t.equal(await bar.count(), 1, 'the progress bar has an accessible name');
  const live = page.locator('[data-field=live]');
  t.equal(await live.getAttribute('aria-live'), 'polite');
  t.equal(await live.getAttribute('role'), 'status');
  // The script follows the job: its phase in words (no raw phase names).
  await page.waitForFunction(() => document.querySelector('[data-field=live]')?.textContent === 'Connecting to the source', null, { timeout: 30_000 });
  t.ok(inOrder(await headingLevels(page)), 'headings in order');
  t.ok((await smallestText(page)) >= 13, 'no text under 13px');
  await screenshot(page, 'import-running');
  await page.click('button:has-text("Cancel import")');
  await page.waitForSelector('text=Import canceled', { timeout: 30_000 });
});

t.test('while objects arrive the page says so in words and figures: percent, objects of the total, bytes, rate', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'trunk', work]);
  await addBulk(g, work, 30, 40_000);
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'bulk.git')]);
  const daemon = await startGitDaemon(t, served);
  // About 80 KiB/s: long enough a transfer for git to report it.
  const proxy = await startProxy(t, daemon.port, { rate: 4000 });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/-/import`);
  await page.fill('#url', `git://127.0.0.1:${proxy.port}/bulk.git`);
  await page.click('button:has-text("Begin import")');
  await page.waitForFunction(() => document.querySelector('[data-field=live]')?.textContent === 'Receiving objects', null, { timeout: 60_000 });
  await page.waitForFunction(() => /\/s$/.test(document.querySelector('[data-field=details]')?.textContent ?? ''), null, { timeout: 60_000 });
  t.match(
    await page.textContent('[data-field=details]'),
    /^\d+% · [\d,]+ of [\d,]+ objects · [\d.]+ (bytes|KiB|MiB) received · [\d.]+ (bytes|KiB|MiB)\/s$/,
    'percent, objects of the total, bytes received and the rate',
  );
  t.match(await page.getAttribute('[data-field=percent]', 'aria-valuenow'), /^\d+$/, 'the bar carries its value');
  await screenshot(page, 'import-receiving');
  proxy.rate = 0;
  await page.waitForSelector('text=Import finished', { timeout: 60_000 });
  t.equal((await page.textContent('[data-field=commits]'))!.trim(), '30');
});
