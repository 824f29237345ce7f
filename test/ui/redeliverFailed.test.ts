import t from 'tap';
import { buildRepo } from '../helpers/wharf.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { buildWebhook, raise } from '../delivery/build.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';

t.test('the webhook page redelivers failed deliveries since a time or duration, and says how many', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s' } });
  const db = w.running.services.db;
  const repo = await buildRepo(w, 'demo', 'widgets');
  const rx = await startReceiver(t, () => ({ status: 503 }));
  const hook = await buildWebhook(w, repo, rx, { events: ['push'] });
  await raise(w, repo, [{ n: 2 }]);
  const failed = await deliveriesSettled(db, { webhookId: hook.id, count: 3 });
  rx.answer(() => ({ status: 200 }));

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}`);
  t.equal(await page.inputValue('#redeliver-since'), '24h', 'the last day by default');
  await page.fill('#redeliver-since', 'whenever');
  await page.click('text=Redeliver failed deliveries >> nth=-1');
  t.match(await page.textContent('.flash.error'), /Nothing redelivered: since must match format "date-time"/);

  await page.fill('#redeliver-since', '1h');
  await page.click('button:has-text("Redeliver failed deliveries")');
  t.equal(await page.textContent('.flash'), 'Redelivered 3 failed deliveries. None remain.');
  await screenshot(page, 'redeliver-failed');
  await waitFor(() => rx.received.length === 6, { what: 'the three sent again' });
  t.same(
    rx.received
      .slice(3)
      .map((r) => r.guid)
      .sort(),
    failed.map((d) => d.guid).sort(),
    'same guids',
  );

  await page.fill('#redeliver-since', new Date(Date.now() - 3_600_000).toISOString());
  await page.click('button:has-text("Redeliver failed deliveries")');
  t.equal(await page.textContent('.flash'), 'Redelivered 0 failed deliveries. None remain.', 'a second submission sends nothing new');
});
