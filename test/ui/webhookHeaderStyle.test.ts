import t from 'tap';
import { newWebhookForm } from './webhookForm.ts';
import { waitFor } from '../helpers/wait.ts';

t.test('the webhook form sets header_style: added with GitHub header names, edited back', async (t) => {
  const { w, rx, page } = await newWebhookForm(t, '/gh');
  t.equal(await page.inputValue('#header_style'), 'wharf', "Wharf's by default");
  await page.selectOption('#header_style', 'github');
  await page.click('button:has-text("Add webhook")');
  const [hook] = (await w.api('GET', '/api/v1/repos/demo/widgets/webhooks')).body;
  t.equal(hook.header_style, 'github');
  await waitFor(() => rx.received.length === 1, { what: 'the creation ping' });
  t.equal(rx.received[0].headers['x-github-event'], 'ping', 'its ping carries the GitHub headers');

  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}`);
  t.match(await page.textContent('main'), "GitHub's header names too");
  await page.goto(`${w.url}/demo/widgets/settings/hooks/${hook.id}/edit`);
  t.equal(await page.inputValue('#header_style'), 'github', 'the edit form shows it');
  await page.selectOption('#header_style', 'wharf');
  await page.click('button:has-text("Update webhook")');
  t.equal((await w.api('GET', `/api/v1/repos/demo/widgets/webhooks/${hook.id}`)).body.header_style, 'wharf');
});
