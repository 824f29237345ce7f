import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { buildUser } from '../helpers/wharf.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';

t.test('a mirror through the web UI: imported with "Keep in sync", synced with Sync now, cut over with Stop mirroring', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'First upstream');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  const bare = path.join(served, 'tool.git');
  await g.ok(['clone', '-q', '--bare', work, bare]);
  const daemon = await startGitDaemon(t, served);

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/-/import`);
  await page.fill('#url', daemon.url('tool'));
  await page.check('#mirror');
  await page.fill('#mirror_interval', '30s');
  await page.click('button:has-text("Begin import")');
  t.match(await page.textContent('#mirrorInterval-error'), 'at least 1m', 'a bad interval is shown at its field');
  t.ok(await page.isChecked('#mirror'), 'the form keeps the box checked');
  await page.fill('#mirror_interval', '2h');
  await screenshot(page, 'mirror-import-form');
  await page.click('button:has-text("Begin import")');
  await page.waitForSelector('text=Import finished', { timeout: 60_000 });
  await page.click('a:has-text("Open demo/tool")');
  await page.waitForURL(`${w.url}/demo/tool`);
  t.equal(await page.textContent('[data-field=mirror-source]'), daemon.url('tool'), 'the page names the source');
  t.match(await page.textContent('.mirror'), 'every 2h');
  t.match(await page.textContent('[data-field=mirror-last]'), /Last sync .*: succeeded/, 'the import counts as the first sync');

  // Upstream moves on; Sync now brings it over and the page shows the sync.
  await g.commit(work, 'Second upstream');
  await g.ok(['push', '-q', bare, 'main'], { cwd: work });
  const before = Date.now();
  await page.click('button:has-text("Sync now")');
  t.match(await page.textContent('.flash'), 'Sync queued');
  await waitFor(
    async () => {
      const m = (await w.api('GET', '/api/v1/repos/demo/tool')).body.mirror;
      return m?.last_sync_at && Date.parse(m.last_sync_at) >= before - 1000 && m.last_sync_status === 'succeeded';
    },
    { what: 'the requested sync' },
  );
  await page.reload();
  t.match(await page.textContent('[data-field=mirror-last]'), 'succeeded');
  t.match(await page.textContent('main'), 'Second upstream', 'the synced commit shows');
  await screenshot(page, 'mirror-repo');
  t.same(refList(await g.ok(['ls-remote', repoUrl(w, 'demo/tool', w.adminToken)])), refList(await g.ok(['ls-remote', bare])), 'refs equal the source');

  // Stop mirroring asks first; Cancel changes nothing.
  await page.click('a:has-text("Stop mirroring")');
  t.match(await page.textContent('h1'), 'Stop mirroring?');
  await page.click('a:has-text("Cancel")');
  t.ok((await w.api('GET', '/api/v1/repos/demo/tool')).body.mirror, 'still a mirror after Cancel');
  await page.click('a:has-text("Stop mirroring")');
  await page.click('button:has-text("Yes, stop mirroring")');
  t.match(await page.textContent('.flash'), 'Mirroring stopped');
  t.equal(await page.locator('.mirror').count(), 0, 'no mirror card after the cutover');
  t.equal((await w.api('GET', '/api/v1/repos/demo/tool')).body.mirror, null, 'the API agrees');
});

t.test('a member sees the mirror card without its buttons, and cannot post them', async (t) => {
  const w = await startUiWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'Upstream');
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--bare', work, path.join(served, 'tool.git')]);
  const daemon = await startGitDaemon(t, served);
  const started = await w.api('POST', '/api/v1/repos/import', { body: { source_url: daemon.url('tool'), target_org: 'demo', name: 'tool', mirror: true } });
  t.equal(started.status, 202, started.text);
  await waitFor(async () => (await w.api('GET', `/api/v1/repos/import/${started.body.id}`)).body.status === 'succeeded', { what: 'the import' });
  const member = await buildUser(w, 'mia', { org: 'demo', role: 'member' });

  const { page } = await openBrowser(t);
  await signIn(page, w, member.token);
  await page.goto(`${w.url}/demo/tool`);
  t.ok(await page.isVisible('.mirror'), 'the card shows');
  t.equal(await page.locator('.mirror button').count(), 0, 'no Sync now for a member');
  const refused = await page.goto(`${w.url}/demo/tool/mirror/stop`);
  t.equal(refused?.status(), 403, 'the confirmation page is for admins');
});
