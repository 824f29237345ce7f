import t from 'tap';
import { newWebhookForm } from './webhookForm.ts';
import { waitFor } from '../helpers/wait.ts';

const VALUE = 'Bearer ui-custom-header-4c1d';

t.test('the webhook form sets custom headers: added, kept on edit with a blank value, removed; values never shown', async (t) => {
  const { w, rx, page } = await newWebhookForm(t, '/custom');
  await page.getByLabel('Header 1 name').fill('Authorization');
  await page.getByLabel('Header 1 value').fill(VALUE);
  await page.click('button:has-text("Add webhook")');
  const [hook] = (await w.api('GET', '/api/v1/repos/demo/widgets/webhooks')).body;
  t.same(hook.headers, { Authorization: '********' });
  await waitFor(() => rx.received.length === 1, { what: 'the creation ping' });
  t.equal(rx.received[0].headers.authorization, VALUE, 'the header arrives with the ping');

  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}`);
  t.match(await page.textContent('main'), 'custom headers Authorization', 'the webhook page names it');
  t.notOk((await page.content()).includes(VALUE), 'the webhook page does not show the value');

  // Edit: the name is shown, the value blank (kept), a second header added.
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}/edit`);
  t.equal(await page.getByLabel('Header 1 name').inputValue(), 'Authorization');
  t.equal(await page.getByLabel('Header 1 value').inputValue(), '', 'the value is not shown');
  t.notOk((await page.content()).includes(VALUE), 'nor anywhere in the page');
  await page.getByLabel('Header 2 name').fill('X-Extra');
  await page.getByLabel('Header 2 value').fill('extra');
  await page.click('button:has-text("Update webhook")');
  t.same((await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${hook.id}`)).body.headers, { Authorization: '********', 'X-Extra': '********' });
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`)).status, 202);
  await waitFor(() => rx.received.length === 2, { what: 'a ping after the edit' });
  t.equal(rx.received[1].headers.authorization, VALUE, 'a blank value kept the header');
  t.equal(rx.received[1].headers['x-extra'], 'extra');

  // A reserved name is refused with the form's error, and nothing changes.
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}/edit`);
  await page.getByLabel('Header 3 name').fill('X-Service-Event');
  await page.getByLabel('Header 3 value').fill('nope');
  await page.click('button:has-text("Update webhook")');
  t.match(await page.textContent('#headers-error'), 'X-Service-Event');
  t.same((await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${hook.id}`)).body.headers, { Authorization: '********', 'X-Extra': '********' });

  // Remove one.
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}/edit`);
  await page.getByLabel('Remove header Authorization').check();
  await page.click('button:has-text("Update webhook")');
  t.same((await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${hook.id}`)).body.headers, { 'X-Extra': '********' }, 'removed');
  t.equal((await w.api('POST', `/api/v1/webhooks/${hook.id}/ping`)).status, 202);
  await waitFor(() => rx.received.length === 3, { what: 'a ping after the removal' });
  t.notOk('authorization' in rx.received[2].headers, 'no longer sent');
  t.equal(rx.received[2].headers['x-extra'], 'extra', 'the other one still is');
  t.notOk(w.logs.join('').includes(VALUE), 'not in the server log');
});
