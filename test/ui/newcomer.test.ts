import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { gitClient } from '../helpers/git.ts';
import { runCli } from '../helpers/cli.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { buildRepo } from '../helpers/wharf.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';
import { NAME_RULE } from '../../src/domain/names.ts';

/** The id of the element that has the focus once the page settled (autofocus runs after load). */
async function focused(page: Page, id: string): Promise<string> {
  await page.waitForFunction((want) => document.activeElement?.id === want, id, { timeout: 5000 }).catch(() => undefined);
  return page.evaluate(() => document.activeElement?.id ?? '');
}

t.test('a site administrator sees an organization the CLI made, on the home page and in the import form, and imports into it', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const env = { DATABASE_URL: w.config.databaseUrl, DATA_DIR: w.config.dataDir, REPOS_DIR: w.config.reposDir, LOG_LEVEL: 'silent' };
  const made = await runCli(['org', 'create', 'acme'], env);
  t.equal(made.code, 0, made.stderr);

  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'First');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--bare', work, path.join(served, 'tool.git')]);
  const daemon = await startGitDaemon(t, served);

  const { page } = await openBrowser(t);
  await signIn(page, w);
  t.ok(await page.isVisible('main a[href="/acme"]'), 'acme is on the home page');
  t.ok(await page.isVisible('main a[href="/demo"]'), 'and demo');
  await page.click('text=Import a repository');
  const options = await page.$$eval('#org option', (os) => os.map((o) => o.textContent));
  t.same(options, ['acme', 'demo'], 'the import form offers every organization');
  await page.fill('#url', daemon.url('tool'));
  await page.selectOption('#org', 'acme');
  await page.click('button:has-text("Begin import")');
  await page.waitForSelector('text=Import finished', { timeout: 60_000 });
  t.equal((await w.api('GET', '/api/v1/repos/acme/tool')).status, 200, 'the server imported into it');
});

t.test('forms: after a failed submit the first invalid field has the focus and the errors are announced, in words', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'empty');
  const { page } = await openBrowser(t);

  await page.goto(`${w.url}/-/login`);
  await page.fill('#token', 'wharf_nothing');
  await page.click('button[type=submit].primary');
  t.equal(await focused(page, 'token'), 'token', 'sign-in: the token field');
  t.equal(await page.getAttribute('#token', 'aria-describedby'), 'token-error');
  t.ok(await page.isVisible('[role=alert]#form-errors'), 'an error summary, announced');

  await signIn(page, w);
  await page.goto(`${w.url}/-/import`);
  await page.fill('#url', 'git://127.0.0.1:1/x.git');
  await page.fill('#name', 'bad name!');
  await page.click('button:has-text("Begin import")');
  t.equal(await focused(page, 'name'), 'name', 'import: focus on the name');
  t.equal(await page.textContent('#name-error'), NAME_RULE, 'the rule in words');
  t.notMatch(await page.textContent('main'), /must match pattern/);
  t.match(await page.textContent('[role=alert]#form-errors'), 'Repository name: must be letters, digits');
  t.equal(await page.getAttribute('#name', 'aria-describedby'), 'name-error');
  await screenshot(page, 'import-form-errors');

  // An empty name takes the source's; where the source's address gives none, the message says so.
  await page.fill('#url', 'https://127.0.0.1:1/.git');
  await page.fill('#name', '');
  await page.click('button:has-text("Begin import")');
  t.equal(await focused(page, 'name'), 'name');
  t.match(await page.textContent('#name-error'), /source's address gives no name/);

  // The first of several: the URL comes before the name.
  await page.fill('#url', '');
  await page.fill('#name', 'x');
  await page.click('button:has-text("Begin import")');
  t.equal(await focused(page, 'url'), 'url', 'the first invalid field in the form');

  await page.goto(`${w.url}/demo/empty/settings/hooks/new`);
  await page.fill('#url', 'http://127.0.0.1:1/');
  await page.click('button:has-text("Add webhook")');
  t.equal(await focused(page, 'url'), 'url', 'webhook form: the payload URL');
  t.match(await page.textContent('#url-error'), /loopback address.*WEBHOOK_ALLOWED_HOSTS=external,loopback/);
});

t.test('the empty repository page says how to push: clone URL, any user name, a token as password', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'fresh');
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/fresh`);
  const help = (await page.textContent('.push-help'))!.replace(/\s+/g, ' ');
  t.match(help, `git remote add wharf ${w.config.baseUrl}/demo/fresh.git`);
  t.match(help, /any user name and an access token as the password/);
});
