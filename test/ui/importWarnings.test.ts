import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { gitClient } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { waitForJob } from '../import/helpers.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';

t.test('an import with a missing LFS object: a warning state in the API, the job page and the history, with an error that says what to fix', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'main', work]);
  const oid = 'cd'.repeat(32);
  await g.commit(work, 'with an LFS file', { 'model.bin': `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize 4096\n` });
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'models.git')]);
  const daemon = await startGitDaemon(t, served);

  // A git:// source: the LFS endpoint guessed from it is https://127.0.0.1/models.git/info/lfs, where nothing listens.
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: daemon.url('models'), target_org: 'demo', name: 'models', visibility: 'private' },
  });
  t.equal(created.status, 202, created.text);
  t.same(created.body.warnings, [], 'no warnings while it runs');
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'succeeded', 'the repository was imported: the status stays succeeded');
  t.equal(job.warnings.length, 1, 'one warning');
  t.equal(job.warnings[0].code, 'missing_lfs_objects');
  t.match(job.warnings[0].message, '1 LFS object is missing at the source');
  const [missing] = job.repository.missing_lfs_objects;
  t.equal(missing.oid, oid);
  t.match(missing.error, 'https://127.0.0.1/models.git/info/lfs', 'the error names the URL tried');
  t.match(missing.error, /ECONNREFUSED/, "and the system's reason");
  t.match(missing.error, '"LFS endpoint"', 'and the field that fixes it');

  const { browser, page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/-/import/${job.id}`);
  const badge = page.locator('[data-field=live] .result');
  t.equal((await badge.textContent())?.trim(), 'Import finished with warnings', 'not a green "Import finished"');
  t.match(await badge.getAttribute('class'), /\bwait\b/, 'amber');
  const list = (await page.textContent('[data-field=missing]'))!.replace(/\s+/g, ' ');
  t.match(list, `1 LFS object missing at the source: ${oid} (4096 bytes)`);
  t.match(list, 'LFS endpoint');
  await expectAccessible(t, page, 'import-finished-with-warnings');

  // On a phone the 64-character oid wraps instead of widening the page.
  const phone = await browser.newPage({ viewport: { width: 375, height: 800 } });
  await signIn(phone, w);
  await phone.goto(`${w.url}/-/import/${job.id}`);
  const widths = await phone.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  t.ok(widths[0] <= widths[1], `no sideways scrolling at 375 px (${widths[0]} in ${widths[1]})`);

  await page.goto(`${w.url}/-/orgs/demo/imports`);
  const row = page.locator(`[data-import="${job.id}"]`);
  t.equal((await row.locator('.result').textContent())?.trim(), 'Finished with warnings', 'the history does not say Succeeded');
  t.match(await row.textContent(), '1 LFS object missing');
  await expectAccessible(t, page, 'import-history-with-warnings');
});
