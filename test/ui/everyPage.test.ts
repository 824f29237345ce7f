import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { buildRepo } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { startReceiver } from './receiver.ts';
import { expectAccessible } from './audit.ts';

// Every page of the web UI (src/ui/routes/*), signed out and in, empty and full, at 375 and
// 1280 px: no sideways scrolling, no WCAG 2.2 AA violation axe-core can find, a screenshot each.
t.test('every page fits a phone and a laptop and passes axe-core WCAG 2.2 AA', async (t) => {
  const w = await startUiWharf(t, {
    env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', IMPORT_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s,30s,1m,5m' },
  });
  await buildRepo(w, 'demo', 'widgets', 'public');
  await buildRepo(w, 'demo', 'empty');
  const receiver = await startReceiver(t);
  const db = w.running.services.db;

  // Webhooks first, so the push and the issue below are delivered: one receiver answers 200, one 500 (retrying).
  const ok = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', {
    body: { url: `${receiver.url}/ok/a-rather-long-path/that-goes/on-and-on?token=abcdefghijklmnop`, events: ['*'], branch_filter: 'main' },
  });
  const failing = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/fail`, events: ['push'] } });
  const orgHook = await w.api('POST', '/api/v1/orgs/demo/webhooks', { body: { url: `${receiver.url}/ok/org`, events: ['repository'] } });
  t.equal(orgHook.status, 201);

  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'First commit');
  await g.commit(work, 'Add the <widget> frame, with a subject long enough to wrap on a phone screen');
  await g.ok(['tag', '-a', 'v1.0', '-m', 'one'], { cwd: work });
  await g.ok(['branch', 'feature/a-branch-name-that-is-quite-long'], { cwd: work });
  await g.ok(['push', '-q', repoUrl(w, 'demo/widgets', w.adminToken), 'main', 'v1.0', 'feature/a-branch-name-that-is-quite-long'], { cwd: work });
  await w.pushesRecorded();
  t.equal((await w.api('POST', '/api/v1/repos/demo/widgets/issues', { body: { title: 'The frame wobbles' } })).status, 201);
  const settled = () =>
    db('deliveries')
      .where('webhook_id', ok.body.id)
      .where('status', 'pending')
      .first('id')
      .then((r: unknown) => !r);
  await waitFor(settled, { what: 'the 200 receiver to have everything' });
  await waitFor(() => db('deliveries').where('webhook_id', failing.body.id).where('attempts', '>', 0).first('id'), { what: 'a failed first attempt' });

  // A mirror (finished import) and an import that hangs on a source that never answers.
  const src = path.join(g.dir, 'served');
  fs.mkdirSync(src);
  await g.ok(['clone', '-q', '--bare', work, path.join(src, 'tool.git')]);
  const daemon = await startGitDaemon(t, src);
  const mirrorJob = await w.api('POST', '/api/v1/repos/import', { body: { source_url: daemon.url('tool'), target_org: 'demo', name: 'tool', mirror: true } });
  t.equal(mirrorJob.status, 202);
  const held: net.Socket[] = [];
  const silent = net.createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.close();
    for (const socket of held) socket.destroy();
  });
  const port = (silent.address() as net.AddressInfo).port;
  const hanging = await w.api('POST', '/api/v1/repos/import', { body: { source_url: `git://127.0.0.1:${port}/stuck.git`, target_org: 'demo', name: 'stuck' } });
  t.equal(hanging.status, 202);
  await waitFor(async () => (await w.api('GET', `/api/v1/repos/import/${mirrorJob.body.id}`)).body.status === 'succeeded', {
    timeoutMs: 60_000,
    what: 'the mirror import',
  });

  const { page } = await openBrowser(t);
  const visit = async (label: string, url: string, status = 200) => {
    const res = await page.goto(`${w.url}${url}`);
    t.equal(res?.status(), status, `${label}: ${url} answers ${status}`);
    await expectAccessible(t, page, label);
  };

  // Signed out.
  await visit('login', '/-/login');
  await visit('welcome', '/');
  await visit('org-public', '/demo');
  await visit('repo-public', '/demo/widgets');
  await visit('not-found', '/a/b/c/d', 404);
  await page.goto(`${w.url}/-/login`);
  await page.fill('#token', 'wharf_not-a-real-token');
  await page.click('button[type=submit].primary');
  await expectAccessible(t, page, 'login-error');

  // Signed in.
  await signIn(page, w);
  await visit('home', '/');
  await visit('org', '/demo');
  await visit('repo', '/demo/widgets');
  await visit('repo-empty', '/demo/empty');
  await visit('repo-mirror', '/demo/tool');
  await visit('mirror-stop', '/demo/tool/mirror/stop');
  const hooks = '/demo/widgets/settings/hooks';
  await visit('webhook-list', hooks);
  await visit('webhook-list-empty', '/demo/empty/settings/hooks');
  await visit('webhook-new', `${hooks}/new`);
  await page.fill('#url', 'ftp://example.com/x');
  await page.click('button:has-text("Add webhook")');
  t.ok(await page.isVisible('#url-error'));
  await expectAccessible(t, page, 'webhook-new-errors');
  await page.fill('#url', `${receiver.url}/ok/added`);
  await page.click('button:has-text("Add webhook")');
  t.ok(await page.isVisible('#new-secret'));
  await expectAccessible(t, page, 'webhook-secret');
  await visit('webhook-deliveries', `${hooks}/${ok.body.id}`);
  await visit('webhook-deliveries-retrying', `${hooks}/${failing.body.id}`);
  const delivered = await db('deliveries').where('webhook_id', ok.body.id).where('event', 'push').first('id');
  await visit('delivery-detail', `${hooks}/${ok.body.id}/deliveries/${delivered.id}`);
  const retrying = await db('deliveries').where('webhook_id', failing.body.id).first('id');
  await visit('delivery-detail-retrying', `${hooks}/${failing.body.id}/deliveries/${retrying.id}`);
  await visit('webhook-edit', `${hooks}/${ok.body.id}/edit`);
  await visit('webhook-delete', `${hooks}/${ok.body.id}/delete`);
  const orgHooks = '/-/orgs/demo/settings/hooks';
  await visit('org-webhook-list', orgHooks);
  await visit('org-webhook-new', `${orgHooks}/new`);
  await visit('org-webhook-deliveries', `${orgHooks}/${orgHook.body.id}`);
  await visit('import-form', '/-/import');
  await visit('import-progress', `/-/import/${hanging.body.id}`);
  await visit('import-finished', `/-/import/${mirrorJob.body.id}`);
  t.equal(await page.locator('button:has-text("Cancel import")').count(), 0, 'a finished import offers no cancel');
  await page.goto(`${w.url}/-/import/${hanging.body.id}`);
  await page.click('button:has-text("Cancel import")');
  await page.waitForSelector('text=Import canceled');
  await expectAccessible(t, page, 'import-canceled');
  await visit('forbidden-or-missing', '/demo/nothing-here/settings/hooks', 404);
});
