import t from 'tap';
import { createHmac } from 'node:crypto';
import type { Page } from 'playwright-core';
import { buildRepo } from '../helpers/wharf.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';

/** Reloads a page until `selector` holds `text` (deliveries are sent in the background). */
async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  let first = true;
  await waitFor(
    async () => {
      if (!first) await page.reload();
      first = false;
      return (await page.$$eval(selector, (els) => els.map((e) => e.textContent ?? '').join('\n'))).includes(text);
    },
    { timeoutMs: 30_000, intervalMs: 250, what: `"${text}" in ${selector}` },
  );
}

t.test('webhooks through the browser: add, list, ping, failures, redeliver, edit, delete', async (t) => {
  // One attempt per delivery, so a failure is final at once and shows as such.
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s' } });
  await buildRepo(w, 'demo', 'widgets');
  const receiver = await startReceiver(t);
  const { page } = await openBrowser(t);
  await signIn(page, w);
  const hooks = `${w.url}/demo/widgets/settings/hooks`;

  // Add one through the form, letting Wharf generate the secret.
  await page.goto(`${w.url}/demo/widgets`);
  await page.click('text=Settings · Webhooks');
  t.match(await page.textContent('main'), 'No webhooks yet');
  await page.click('text=Add webhook');
  await page.fill('#url', `${receiver.url}/ok`);
  t.notOk(await page.isVisible('.event-boxes'), 'event boxes stay folded for "Just the push event"');
  await page.check('input[name=mode][value=select]');
  t.ok(await page.isVisible('.event-boxes'), 'and unfold for individual events');
  await page.check('input[name=events][value=push]');
  await page.check('input[name=events][value=issue]');
  await page.fill('#branch_filter', 'main');
  await screenshot(page, 'webhook-form');
  await page.click('button:has-text("Add webhook")');
  const secret = (await page.inputValue('#new-secret'))!;
  t.match(secret, /^whsec_/, 'the generated secret is shown once');
  await screenshot(page, 'webhook-secret');

  // The list: URL, events, active, last result (creation pings an active webhook).
  await page.goto(hooks);
  const row = () => page.textContent('tbody tr');
  t.match(await row(), `${receiver.url}/ok`);
  t.match(await row(), 'push, issue');
  t.match(await row(), 'Active');
  t.match(await row(), 'branches: main');
  await waitForText(page, 'tbody tr', 'Delivered');
  await screenshot(page, 'webhook-list');
  t.notMatch(await page.content(), secret, 'the secret is never rendered again');

  // Its page: counts and the ping delivery, linking to its own page with request and response.
  await page.click('tbody tr a.url');
  await waitForText(page, '.deliveries', 'Delivered 200');
  const hookPage = page.url();
  t.match(await page.textContent('.counts'), /Total\s*1\s*Successful\s*1\s*Failed\s*0\s*Retrying\s*0\s*Queued\s*0/);
  t.match(await page.textContent('.delivery'), 'ping');
  t.match(await page.textContent('.delivery'), /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/, 'timestamp to the second');
  await page.click('.delivery a.event');
  const unfolded = (await page.textContent('main'))!;
  t.match(unfolded, /X-Service-Event\s*ping/i, 'request headers');
  t.match(unfolded, '"zen"', 'request body');
  t.match(unfolded, 'thanks', 'response body');
  t.notMatch(await page.content(), secret);
  const ping = receiver.hits.find((h) => h.headers['x-service-event'] === 'ping')!;
  const expected = `sha256=${createHmac('sha256', secret).update(ping.body).digest('hex')}`;
  t.equal(ping.headers['x-service-signature'], expected, 'the secret shown is the one that signs');

  // Ping from the page: queued, then its outcome on its own page.
  await page.goto(hookPage);
  await page.click('button:has-text("Ping")');
  t.match(await page.textContent('.flash'), 'Ping queued');
  await waitForText(page, '[data-live=delivery-state]', 'Delivered 200');
  await page.goto(hookPage);
  await waitForText(page, '.counts', 'Successful2');
  await screenshot(page, 'webhook-page');

  // A failing receiver, with a secret of our own (so no secret page).
  await page.goto(`${hooks}/new`);
  await page.fill('#url', `${receiver.url}/fail`);
  await page.fill('#secret', 'our-own-secret');
  await page.click('button:has-text("Add webhook")');
  t.match(await page.textContent('.flash'), 'Webhook added');
  await waitForText(page, '.deliveries', 'Failed 500');
  // The counts and the list are two reads: a result written between them shows in the list first.
  await waitForText(page, '.counts', 'Failed1');
  t.notMatch(await page.content(), 'our-own-secret');
  const failedHook = page.url();
  await page.click('.delivery a.event');
  t.match(await page.textContent('main'), 'nope', 'the failing response body');
  await screenshot(page, 'webhook-failed');

  // Redeliver it: a new delivery of the same guid, marked as a redelivery, whose page shows how it went.
  await page.click('button:has-text("Redeliver")');
  t.match(await page.textContent('.flash'), 'Redelivery queued');
  await waitForText(page, '[data-live=delivery-state]', 'Failed 500');
  t.match(await page.textContent('[data-live=delivery-state]'), 'redelivery');
  await page.goto(failedHook);
  await waitForText(page, '.counts', 'Failed2');
  t.match(await page.textContent('.deliveries'), 'redelivery');
  const failures = receiver.hits.filter((h) => h.path === '/fail');
  t.equal(failures.length, 2);
  t.equal(failures[0].headers['x-service-delivery'], failures[1].headers['x-service-delivery'], 'same guid on redelivery');

  // Edit: a bad URL comes back next to its field; then "everything" and inactive.
  await page.goto(hookPage);
  await page.click('a.button:has-text("Edit")');
  await page.fill('#url', 'ftp://example.com/x');
  await page.click('button:has-text("Update webhook")');
  t.ok(await page.isVisible('#url-error'), 'the API refusal is shown at the URL field');
  t.equal(await page.inputValue('#url'), 'ftp://example.com/x', 'what was typed is kept');
  await page.check('input[name=mode][value=select]');
  for (const box of await page.$$('input[name=events]:checked')) await box.uncheck();
  await page.fill('#url', `${receiver.url}/ok`);
  await page.click('button:has-text("Update webhook")');
  t.match(await page.textContent('#events-error'), 'at least one event');
  await page.check('input[name=mode][value=all]');
  await page.uncheck('input[name=active]');
  await page.fill('#branch_filter', '');
  await page.click('button:has-text("Update webhook")');
  t.match(await page.textContent('.flash'), 'Webhook updated');
  await page.goto(hooks);
  const first = (await page.textContent('tbody tr:first-child'))!;
  t.match(first, 'everything');
  t.match(first, 'Inactive');
  t.notMatch(first, 'branches:', 'the cleared branch filter is gone');

  // Delete, with a confirmation step; Cancel keeps it.
  await page.click('tbody tr:first-child a:has-text("Delete")');
  t.match(await page.textContent('h1'), 'Delete this webhook?');
  await screenshot(page, 'webhook-delete');
  await page.click('a:has-text("Cancel")');
  t.equal(await page.locator('tbody tr').count(), 2);
  await page.click('tbody tr:first-child a:has-text("Delete")');
  await page.click('button:has-text("Yes, delete webhook")');
  t.match(await page.textContent('.flash'), 'Webhook deleted');
  t.equal(await page.locator('tbody tr').count(), 1);
  t.equal((await w.api('GET', '/api/v1/repos/demo/widgets/webhooks')).body.length, 1);
});

t.test('a receiver that never answers shows as "Failed timeout"', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s', WEBHOOK_TIMEOUT: '1s' } });
  await buildRepo(w, 'demo', 'widgets');
  const receiver = await startReceiver(t);
  const made = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/slow` } });
  t.equal(made.status, 201);
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${made.body.id}`);
  await waitForText(page, '.deliveries', 'Failed timeout');
  t.ok(await page.isVisible('.delivery button:has-text("Redeliver")'), 'a finished delivery can be redelivered from the list');
  await page.click('.delivery a.event');
  t.match(await page.textContent('main'), 'No response: timeout');
  t.ok(await page.isVisible('main button:has-text("Redeliver")'), 'and from its page');
});

t.test('deliveries come in pages of 20 with a link to older ones, and filter by result', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'widgets');
  const receiver = await startReceiver(t);
  const made = await w.api('POST', '/api/v1/repos/demo/widgets/webhooks', { body: { url: `${receiver.url}/ok` } });
  for (let i = 0; i < 22; i++) t.equal((await w.api('POST', `/api/v1/webhooks/${made.body.id}/ping`)).status, 202);
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${made.body.id}`);
  await waitForText(page, '.counts', 'Successful23');
  t.equal(await page.locator('.delivery').count(), 20, 'the newest 20');
  await page.click('a:has-text("Older deliveries")');
  t.equal(await page.locator('.delivery').count(), 3, 'then the rest');
  t.notOk(await page.isVisible('a:has-text("Older deliveries")'), 'and no further link');
  await page.click('.filters a:has-text("Failed")');
  t.match(await page.textContent('main'), 'No deliveries with this result yet.');
  t.match(await page.textContent('.counts'), /Total\s*23/, 'the counts stay those of the webhook');
});
