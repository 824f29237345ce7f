import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { chromium } from 'playwright-core';
import { gitClient } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { waitForJob } from '../import/helpers.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';

t.test('"Sync every" is off while "Keep in sync" is: disabled by the script, ignored by the server without one', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'one');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'tool.git')]);
  const daemon = await startGitDaemon(t, served);

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/-/import`);
  const interval = page.locator('#mirror_interval');
  t.ok(await interval.isDisabled(), 'unchecked: the field is disabled');
  await page.check('#mirror');
  t.ok(await interval.isEnabled(), 'checked: it can be filled in');
  await interval.fill('2h');
  await page.uncheck('#mirror');
  t.ok(await interval.isDisabled(), 'unchecked again: disabled');
  await expectAccessible(t, page, 'import-form-mirror-off');

  // Without a script the field stays editable, and the server ignores it while the box is unchecked, even when it makes no sense.
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
  t.teardown(() => browser.close());
  const plain = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
  await signIn(plain, w);
  await plain.goto(`${w.url}/-/import`);
  await plain.fill('#url', daemon.url('tool'));
  await plain.fill('#mirror_interval', 'whenever');
  await plain.click('button:has-text("Begin import")');
  const m = /\/-\/import\/(\d+)$/.exec(plain.url());
  t.ok(m, `the import began (${plain.url()})`);
  const job = await waitForJob(w, Number(m![1]));
  t.equal(job.status, 'succeeded');
  t.equal((await w.api('GET', '/api/v1/repos/demo/tool')).body.mirror, null, 'not a mirror: the interval was ignored');
});
