import t from 'tap';
import type { Page } from 'playwright-core';
import { buildRepo } from '../helpers/wharf.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { newWebhookForm } from './webhookForm.ts';
import { expectAccessible } from './audit.ts';
import { startReceiver, type Answer } from '../delivery/receiver.ts';
import { raise } from '../delivery/build.ts';
import { waitFor } from '../helpers/wait.ts';

/** The times the delivery rows of a page give as "next at": none may lie further ahead than `slackMs`. */
async function farNextAttempts(page: Page, slackMs: number): Promise<string[]> {
  const times = await page.$$eval('ul.deliveries .attempt time, [data-live="delivery-state"] time', (els) => els.map((e) => e.getAttribute('datetime') ?? ''));
  return times.filter((iso) => Date.parse(iso) > Date.now() + slackMs);
}

t.test('a paused webhook: badge Paused, a Held filter (UI and API); right after Resume the rows say Sending, not a time 25 s ahead', async (t) => {
  const w = await startUiWharf(t, {
    env: {
      WEBHOOK_ALLOWED_HOSTS: 'loopback',
      WEBHOOK_PAUSE_AFTER: '2',
      WEBHOOK_RETRY_SCHEDULE: '0s,100ms,100ms',
      WEBHOOK_PROBE_AFTER: '1h',
      WEBHOOK_TIMEOUT: '30s',
    },
  });
  const repo = await buildRepo(w, 'demo', 'widgets');
  let answer: Answer = { status: 503, body: 'maintenance' };
  const rx = await startReceiver(t, (r) => (r.event === 'ping' ? {} : answer));
  const id = (await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${rx.url}/h`, secret: 's' } })).body.id;
  await raise(w, repo, [{ type: 'push', n: 3 }]);
  await waitFor(async () => (await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${id}`)).body.health.state === 'paused', { what: 'the pause' });
  const held = (await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${id}`)).body.health.held;
  t.ok(held >= 1, 'deliveries are held');

  const { page } = await openBrowser(t);
  await signIn(page, w);
  const here = `${w.url}/demo/widgets/settings/hooks/${id}`;
  await page.goto(here);
  t.equal((await page.textContent('h1 .result'))?.trim(), 'Paused', 'the heading says Paused, not Active');
  t.match(await page.textContent('#health'), 'Paused');

  // The Held filter lists the held deliveries alone, in the page and in the API.
  await page.click('nav.filters a:has-text("Held")');
  t.match(page.url(), /\?status=held$/);
  t.equal(await page.getAttribute('nav.filters a:has-text("Held")', 'aria-current'), 'page', 'the filter is marked current');
  const states = await page.$$eval('ul.deliveries .delivery-head .result', (els) => els.map((e) => e.textContent?.trim()));
  t.equal(states.length, held, 'every held delivery is listed');
  t.same([...new Set(states)], ['Held'], '… and nothing else');
  await expectAccessible(t, page, 'webhook-held-filter');
  const api = await w.api('GET', `/api/v1/webhooks/${id}/deliveries?status=held`);
  t.equal(api.status, 200);
  t.equal(api.body.deliveries.length, held, 'the API filters held deliveries too');
  t.ok(
    api.body.deliveries.every((d: any) => d.status === 'pending' && d.next_attempt_at === null),
    'each pending with no next attempt',
  );

  // The receiver is back, but slow: each answer takes a while, so the rows are read while their attempts are in flight.
  answer = { delayMs: 8000 };
  const before = rx.arrivals.length;
  await page.goto(here);
  await page.click('#health button:has-text("Resume")');
  await waitFor(() => rx.arrivals.length > before, { what: 'a released delivery reaching the receiver' });
  await page.goto(here);
  t.match(await page.textContent('ul.deliveries'), /Sending/, 'a delivery in flight says so');
  t.same(await farNextAttempts(page, 5000), [], 'no row gives a next attempt far ahead (the claim\u2019s lease is not a next attempt)');
});

t.test('right after Redeliver, the delivery says Sending, not a next attempt 25 s ahead', async (t) => {
  // Answers take 8 s (the page is read meanwhile, however loaded the machine), well inside the attempt timeout.
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_TIMEOUT: '30s' } });
  await buildRepo(w, 'demo', 'widgets');
  let answer: Answer = {};
  const rx = await startReceiver(t, () => answer);
  const id = (await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${rx.url}/h`, secret: 's' } })).body.id;
  await waitFor(async () => (await w.api('GET', `/api/v1/webhooks/${id}/deliveries?status=success`)).body.deliveries.length === 1, {
    what: 'the ping',
  });
  const ping = (await w.api('GET', `/api/v1/webhooks/${id}/deliveries`)).body.deliveries[0];
  const { page } = await openBrowser(t);
  await signIn(page, w);
  answer = { delayMs: 8000 };
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${id}/deliveries/${ping.id}`);
  const before = rx.arrivals.length;
  const original = page.url();
  await Promise.all([page.waitForURL((u) => u.href !== original), page.click('form.actions button:has-text("Redeliver")')]);
  t.match(await page.textContent('.flash'), 'Redelivery queued.');
  await waitFor(() => rx.arrivals.length > before, { what: 'the redelivery reaching the receiver' });
  await page.goto(page.url());
  t.match(await page.textContent('[data-live="delivery-state"]'), /Sending/, 'the redelivery is being sent');
  t.same(await farNextAttempts(page, 5000), [], 'and gives no next attempt far ahead');
});

t.test('a disabled webhook: badge Disabled, and a banner that says what holds for a disabled one', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'demo', 'widgets');
  const rx = await startReceiver(t, () => ({ status: 410, body: 'gone' }));
  const id = (await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${rx.url}/h`, secret: 's' } })).body.id;
  await waitFor(async () => (await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${id}`)).body.health.state === 'disabled', {
    what: 'the 410 disabling it',
  });
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const here = `${w.url}/demo/widgets/settings/hooks/${id}`;
  await page.goto(here);
  t.equal((await page.textContent('h1 .result'))?.trim(), 'Disabled', 'the heading says Disabled');
  let banner = (await page.textContent('#health'))!;
  t.match(banner, /Disabled since/);
  t.match(banner, 'No delivery is held');
  t.notMatch(banner, /sends the held deliveries/, 'no held deliveries promised where there are none');
  t.match(banner, /Resume makes it active again/, 'what Resume does for a disabled one');
  t.match(banner, /Redeliver failed deliveries/, 'and how to send again what failed');
  await expectAccessible(t, page, 'webhook-disabled');

  await raise(w, repo, [{ type: 'push', n: 1 }]);
  await page.goto(here);
  banner = (await page.textContent('#health'))!;
  t.match(banner, '1 delivery is held', 'a new event is held while it is disabled');
  t.match(banner, /Resume makes it active again and sends the held delivery now/);
});

t.test('the webhook form says next to the secret that a secret of ones own turns the Standard Webhooks headers off', async (t) => {
  const { page } = await newWebhookForm(t, '/own-secret');
  const hint = await page.evaluate(() => {
    const ids = document.querySelector('#secret')!.getAttribute('aria-describedby') ?? '';
    return ids
      .split(/\s+/)
      .map((i) => document.getElementById(i)?.textContent ?? '')
      .join(' ');
  });
  t.match(hint, /Standard Webhooks headers/, 'the secret field is described by the hint');
  t.match(hint, /whsec_/, 'which names the form that keeps them');
  t.match(hint, /X-Service-Signature/, 'and what a secret of one\u2019s own still gets');
  await expectAccessible(t, page, 'webhook-form-secret-hint');
});
