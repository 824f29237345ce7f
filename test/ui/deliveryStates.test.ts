import t from 'tap';
import path from 'node:path';
import { buildRepo } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { startReceiver } from './receiver.ts';
import { expectAccessible } from './audit.ts';

t.test('a receiver answering 500: a retrying count, "attempt 2 of 4, next at …", and the webhook list says Retrying', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s,30s,1m,5m' } });
  await buildRepo(w, 'demo', 'widgets');
  const receiver = await startReceiver(t);
  const db = w.running.services.db;
  const made = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/fail`, events: ['push'] } });
  // Its creation ping fails once; the second attempt is 30 s away, so the page holds still while it is read.
  const ping = await waitFor(() => db('deliveries').where('webhook_id', made.body.id).where('attempts', 1).first('id', 'next_attempt_at'), {
    what: 'the first attempt to fail',
  });
  const nextAt = new Date(Number(ping.next_attempt_at)).toISOString();
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const hooks = `${w.url}/demo/widgets/settings/hooks`;

  await page.goto(`${hooks}/${made.body.id}`);
  const counts = (await page.textContent('.counts'))!;
  t.match(counts, /Failed\s*0/, 'nothing has failed for good');
  t.match(counts, /Retrying\s*1/, 'the failing ping counts as retrying');
  t.match(counts, /Queued\s*0/);
  const row = (await page.textContent('.delivery'))!;
  t.match(row, 'Retrying');
  t.match(row, 'ping');
  t.match(row, 'attempt 1 of 4 failed (500');
  t.match(row, `attempt 2 of 4, next at ${nextAt.slice(0, 10)} ${nextAt.slice(11, 19)} UTC`, 'the next attempt and its time');
  t.notMatch(row, 'Failed 500', 'a retrying delivery is not shown as failed');

  await page.goto(hooks);
  t.match(await page.textContent('tbody tr'), 'Retrying (attempt 2 of 4)', 'the list shows the last delivery as it stands');

  // Its own page: the failed attempt's response, and no Redeliver while it is pending.
  await page.goto(`${hooks}/${made.body.id}`);
  await page.click('.delivery a.event');
  t.match(page.url(), new RegExp(`/settings/hooks/${made.body.id}/deliveries/${ping.id}$`));
  t.match(await page.textContent('[data-live=delivery-state]'), 'attempt 2 of 4, next at');
  t.match(await page.textContent('main'), 'Response 500');
  t.match(await page.textContent('main'), 'nope');
  t.notOk(await page.isVisible('button:has-text("Redeliver")'));
  await expectAccessible(t, page, 'delivery-retrying-flow');
});

t.test('each delivery says what it was: push main, tag v1.0, issue opened #1, pull_request opened #2', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'widgets');
  const receiver = await startReceiver(t);
  const made = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/ok`, events: ['*'] } });
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', '-b', 'main', work]);
  await g.commit(work, 'First');
  await g.ok(['tag', 'v1.0'], { cwd: work });
  await g.ok(['push', '-q', repoUrl(w, 'demo/widgets', w.adminToken), 'main', 'v1.0'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'feature'], { cwd: work });
  await g.commit(work, 'Second');
  await g.ok(['push', '-q', repoUrl(w, 'demo/widgets', w.adminToken), 'feature'], { cwd: work });
  await w.pushesRecorded();
  t.equal((await w.api('POST', '/api/v1/repos/demo/widgets/issues', { body: { title: 'One' } })).status, 201);
  t.equal((await w.api('POST', '/api/v1/repos/demo/widgets/pulls', { body: { title: 'Two', head: 'feature', base: 'main' } })).status, 201);
  const db = w.running.services.db;
  await waitFor(async () => !(await db('deliveries').where('webhook_id', made.body.id).where('status', 'pending').first('id')), { what: 'every delivery' });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${made.body.id}`);
  const labels = await page.$$eval('.delivery a.event', (as) => as.map((a) => a.textContent));
  t.same(labels, ['pull_request opened #2', 'issue opened #1', 'push feature', 'tag v1.0', 'push main', 'ping'], 'newest first');
  t.match(await page.textContent('.delivery'), /Delivered 200[\s\S]*attempt 1 of 4 in \d+ ms/, 'the result, attempt and duration');
});

t.test('Ping says "queued", then the outcome as it is: a failure in red with its status, a success in green', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s' } });
  await buildRepo(w, 'demo', 'widgets');
  const receiver = await startReceiver(t);
  const failing = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/fail` } });
  const ok = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/ok` } });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const hooks = `${w.url}/demo/widgets/settings/hooks`;

  await page.goto(`${hooks}/${failing.body.id}`);
  await page.click('button:has-text("Ping")');
  t.match(page.url(), new RegExp(`/settings/hooks/${failing.body.id}/deliveries/\\d+$`), "the ping's own page");
  t.equal(await page.textContent('.flash'), 'Ping queued.');
  // Queued, or claimed by the dispatcher ("being sent now"): never "sent" as if it had gone.
  t.notMatch(await page.textContent('main'), /\bsent\b(?! now)/i, 'nothing claims it was sent');
  // The page updates itself in place (wharf.js, an aria-live region): no reload here.
  await page.waitForSelector('[data-live=delivery-state] .result.bad', { timeout: 30_000 });
  t.match(await page.textContent('[data-live=delivery-state]'), 'Failed 500');
  t.match(await page.textContent('main'), 'nope', "the receiver's answer");
  t.equal(await page.getAttribute('[data-live=delivery-state]', 'aria-live'), 'polite');
  await expectAccessible(t, page, 'ping-failed');

  await page.goto(`${hooks}/${ok.body.id}`);
  await page.click('button:has-text("Ping")');
  await page.waitForSelector('[data-live=delivery-state] .result.ok', { timeout: 30_000 });
  t.match(await page.textContent('[data-live=delivery-state]'), 'Delivered 200');
});
