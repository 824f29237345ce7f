import t from 'tap';
import { buildRepo } from '../helpers/wharf.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { newWebhookForm } from './webhookForm.ts';
import { expectAccessible } from './audit.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { raise } from '../delivery/build.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';

t.test('a paused webhook says so on its page and in the list, with the reason, held deliveries and next probe; Resume sends them', async (t) => {
  const w = await startUiWharf(t, {
    env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_PAUSE_AFTER: '2', WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms', WEBHOOK_PROBE_AFTER: '1h' },
  });
  const repo = await buildRepo(w, 'demo', 'widgets');
  let down = true;
  const rx = await startReceiver(t, (r) => (r.event === 'ping' || !down ? {} : { status: 503, body: 'maintenance' }));
  const created = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${rx.url}/h`, secret: 's' } });
  const id = created.body.id;
  await raise(w, repo, [{ type: 'push', n: 3 }]);
  await waitFor(async () => (await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${id}`)).body.health.state === 'paused', { what: 'the pause' });
  const held = (await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${id}`)).body.health.held;
  t.ok(held >= 1, 'deliveries are held');

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/settings/hooks`);
  const row = await page.textContent('table');
  t.match(row, 'Paused', 'the list says Paused');
  t.match(row, '503 Service Unavailable', '… and why');
  t.match(row, `${held} deliver`, '… and how many are held');

  await page.goto(`${w.url}/demo/widgets/settings/hooks/${id}`);
  const banner = await page.textContent('#health');
  t.match(banner, /Paused since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/, 'the page says since when');
  t.match(banner, '503 Service Unavailable');
  t.match(banner, `${held} deliver`);
  t.match(banner, /next probe .* goes \d{4}-/i, 'the next probe');
  t.match(await page.textContent('ul.deliveries'), /Held.*held until the webhook resumes/s, 'held deliveries say so in the list');
  t.match(await page.textContent('dl.counts'), new RegExp(`Held\\s*${held}`), 'and in the counts');
  await expectAccessible(t, page, 'webhook-paused');

  down = false;
  await page.click('#health button:has-text("Resume")');
  t.match(await page.textContent('.flash'), /Webhook resumed; \d+ held deliver/);
  t.equal(await page.locator('#health').count(), 0, 'no banner once resumed');
  await deliveriesSettled(w.running.services.db, {}, { what: 'the held deliveries' });
  const { body } = await w.api('GET', `/api/v1/webhooks/${id}/deliveries?status=success`);
  t.ok(body.successful >= 4, 'the ping and the three pushes succeeded');
});

t.test('the webhook form sets and clears max_rate; a bad value is named on its field', async (t) => {
  const { w, page } = await newWebhookForm(t, '/paced');
  await page.getByLabel('Most deliveries per second').fill('many');
  await page.click('button:has-text("Add webhook")');
  t.ok(await page.locator('#max_rate[aria-invalid="true"]').count(), 'a word is refused on the field');
  await page.getByLabel('Most deliveries per second').fill('5');
  await page.click('button:has-text("Add webhook")');
  const [hook] = (await w.api('GET', '/api/v1/repos/demo/widgets/webhooks')).body;
  t.equal(hook.max_rate, 5);
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}/edit`);
  t.equal(await page.getByLabel('Most deliveries per second').inputValue(), '5', 'the edit form shows it');
  await page.getByLabel('Most deliveries per second').fill('');
  await page.click('button:has-text("Update webhook")');
  t.equal((await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${hook.id}`)).body.max_rate, null, 'emptied: not paced');
});

t.test('the webhook form sets, shows and clears max_concurrency; a value out of range is named on its field', async (t) => {
  const { w, page } = await newWebhookForm(t, '/capped');
  for (const [bad, reason] of [
    ['65', 'must be <= 64'],
    ['0', 'must be >= 1'],
    ['a', 'must be integer'],
  ]) {
    await page.getByLabel('Most attempts at once').fill(bad);
    await page.click('button:has-text("Add webhook")');
    t.ok(await page.locator('#max_concurrency[aria-invalid="true"]').count(), `${bad} is refused on the field`);
    t.match(await page.textContent('#max_concurrency-error'), reason, '… with the reason next to it');
  }
  t.equal((await w.api('GET', '/api/v1/repos/demo/widgets/webhooks')).body.length, 0, 'nothing created');
  await page.getByLabel('Most attempts at once').fill('3');
  await page.click('button:has-text("Add webhook")');
  const [hook] = (await w.api('GET', '/api/v1/repos/demo/widgets/webhooks')).body;
  t.equal(hook.max_concurrency, 3);
  t.equal(hook.max_rate, null, 'max_rate left alone');
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}/edit`);
  t.equal(await page.getByLabel('Most attempts at once').inputValue(), '3', 'the edit form shows it');
  await page.getByLabel('Most attempts at once').fill('');
  await page.click('button:has-text("Update webhook")');
  t.equal((await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${hook.id}`)).body.max_concurrency, null, 'emptied: no cap');
});
