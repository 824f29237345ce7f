import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { gitClient } from '../helpers/git.ts';
import { importRequest, importValuesFromForm } from '../../src/ui/pages/importForm.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';
import { startGitDaemon } from '../helpers/daemon.ts';

t.test('import from a git daemon source through the form, following the progress page to the new repository', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'trunk', work]);
  const oid = 'ab'.repeat(32);
  await g.commit(work, 'Initial import source', { 'big.bin': `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize 12345\n` });
  await g.ok(['tag', '-a', 'v2.0', '-m', 'two'], { cwd: work });
  await g.ok(['branch', 'release/2.x'], { cwd: work });
  await g.commit(work, 'Second on trunk');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'tool.git')]);
  const daemon = await startGitDaemon(t, served);

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.click('text=Import a repository');
  t.ok(await page.isVisible('#url'), 'Git URL fields show for the Git URL source');
  t.notOk(await page.isVisible('#path'), 'hosted fields are folded away');
  await page.check('input[name=source][value=github]');
  t.ok(await page.isVisible('#path'), 'choosing GitHub shows owner/repository and token');
  t.notOk(await page.isVisible('#url'));
  await page.check('input[name=source][value=git]');
  await page.fill('#url', `${daemon.url('tool')}`);
  await page.selectOption('#org', 'demo');
  await page.check('input[name=visibility][value=public]');
  await screenshot(page, 'import-form');
  await page.click('button:has-text("Begin import")');
  t.match(page.url(), /\/-\/import\/\d+$/, 'a progress page for the job');
  // The page's script polls the job and reloads at the end.
  await page.waitForSelector('text=Import finished', { timeout: 60_000 });
  await screenshot(page, 'import-done');
  const fact = async (field: string) => (await page.textContent(`[data-field=${field}]`))!.trim();
  t.same(
    { commits: await fact('commits'), branches: await fact('branches'), tags: await fact('tags'), lfs: await fact('lfs') },
    { commits: '2', branches: '2', tags: '1', lfs: '0' },
    'commits, branches, tags and LFS objects of the source',
  );
  t.match(await fact('size'), /^\d+(\.\d)? (bytes|KiB)$/, 'its size');
  t.match(await fact('duration'), /^\d+(\.\d)? s$/, 'how long it took');
  t.match(
    (await page.textContent('[data-field=missing]'))!.replace(/\s+/g, ' '),
    `1 LFS object missing at the source: ${oid} (12345 bytes): `,
    'each missing object with oid and reason',
  );
  await page.click('a:has-text("Open demo/tool")');
  await page.waitForURL(`${w.url}/demo/tool`);
  const main = (await page.textContent('main'))!;
  for (const text of ['trunk', 'release/2.x', 'v2.0', 'Second on trunk']) t.match(main, text, `the new repository shows ${text}`);
  t.match(await page.textContent('.badge'), 'Public');

  // Form errors come back next to their fields: a name already taken (409), a bad owner/repository.
  await page.goto(`${w.url}/-/import`);
  await page.fill('#url', `${daemon.url('tool')}`);
  await page.fill('#name', 'tool');
  await page.click('button:has-text("Begin import")');
  t.match(await page.textContent('#name-error'), 'already exists');
  t.equal(await page.inputValue('#url'), `${daemon.url('tool')}`, 'the form keeps what was typed');
  await page.check('input[name=source][value=gitlab]');
  await page.fill('#path', 'no-slash-here');
  await page.click('button:has-text("Begin import")');
  t.match(await page.textContent('#path-error'), 'owner/repository');
  await page.check('input[name=source][value=git]');
  await page.fill('#url', 'file:///etc');
  await page.fill('#name', 'etc');
  await page.click('button:has-text("Begin import")');
  t.ok(await page.isVisible('#url-error'), 'a refused source URL is shown at its field');
});

for (const script of [false, true]) {
  t.test(`${script ? 'with a script the page polls' : 'without a script the page refreshes'} until the job ends; a failure shows its error`, async (t) => {
    // A source that accepts the connection and never answers: the job runs until IMPORT_TIMEOUT ends it.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      silent.close();
    });
    const port = (silent.address() as net.AddressInfo).port;
    const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_TIMEOUT: '3s' } });
    const { browser } = await openBrowser(t);
    const context = await browser.newContext({ javaScriptEnabled: script });
    const page = await context.newPage();
    await signIn(page, w);
    await page.goto(`${w.url}/-/import`);
    await page.fill('#url', `git://127.0.0.1:${port}/slow.git`);
    await page.fill('#name', 'slow');
    await page.click('button:has-text("Begin import")');
    const progress = page.url();
    t.ok(await page.isVisible('progress'), 'a running job shows its progress');
    if (script) t.ok(await page.$('[data-poll]'), 'the script has a status feed to poll');
    else t.equal(await page.getAttribute('noscript meta[http-equiv=refresh]', 'content'), '2', 'the page refreshes itself');
    if (!script) await screenshot(page, 'import-progress');
    await page.waitForSelector('text=Import failed', { timeout: 60_000 });
    t.equal(page.url(), progress, 'the same page, reloaded');
    t.ok(await page.isVisible('.flash.error'), 'the error is shown');
    if (!script) await screenshot(page, 'import-failed');
    t.equal((await w.api('GET', '/api/v1/repos/demo/slow')).status, 404, 'no repository left behind');
  });
}

t.test('a running import can be canceled from its page', async (t) => {
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
  await page.click('button:has-text("Cancel import")');
  await page.waitForSelector('text=Import canceled', { timeout: 60_000 });
  const jobs = await w.api('GET', '/api/v1/repos/import?org=demo');
  t.equal(jobs.body[0].status, 'canceled');
  t.equal((await w.api('GET', '/api/v1/repos/demo/stuck')).status, 404, 'no repository left behind');
});

t.test('hosted sources become clone URLs with the conventional token user names', async (t) => {
  const form = (fields: Record<string, string>) => importRequest(importValuesFromForm(new URLSearchParams({ org: 'demo', ...fields })));
  t.same(form({ source: 'github', path: 'octocat/hello-world', token: 'ghp_x' }).body, {
    target_org: 'demo',
    visibility: 'private',
    source_url: 'https://github.com/octocat/hello-world.git',
    auth_username: 'x-access-token',
    auth_password: 'ghp_x',
    name: 'hello-world',
  });
  t.match(form({ source: 'gitlab', path: 'group/sub/proj.git', token: 'glpat' }).body, {
    source_url: 'https://gitlab.com/group/sub/proj.git',
    auth_username: 'oauth2',
    name: 'proj',
  });
  t.match(form({ source: 'bitbucket', path: 'team/repo', token: 't', name: 'renamed', visibility: 'internal' }).body, {
    source_url: 'https://bitbucket.org/team/repo.git',
    auth_username: 'x-token-auth',
    name: 'renamed',
    visibility: 'internal',
  });
  t.notOk('auth_username' in form({ source: 'github', path: 'octocat/public' }).body!, 'no token, no credentials');
  t.match(form({ source: 'bitbucket', path: 'a/b/c' }).errors, { path: [/owner\/repository/] }, 'Bitbucket has no nested groups');
  t.match(form({ source: 'github', path: '../etc' }).errors, { path: [/owner\/repository/] });
  t.match(form({ source: 'git', url: 'https://example.com/x/tool.git', username: 'me', password: 'pw' }).body, {
    source_url: 'https://example.com/x/tool.git',
    auth_username: 'me',
    auth_password: 'pw',
    name: 'tool',
  });
  t.match(form({ source: 'git', url: '' }).errors, { url: [/URL/], name: [/name/] });
  t.match(
    form({ source: 'git', url: 'git://example.com/x/tool.git', lfs_url: ' https://example.com/x/tool.git/info/lfs ' }).body,
    { lfs_url: 'https://example.com/x/tool.git/info/lfs' },
    'the LFS URL is passed on',
  );
  t.notOk('lfs_url' in form({ source: 'git', url: 'git://example.com/x/tool.git', lfs_url: '' }).body!, 'empty: the endpoint is guessed');
});
