import t from 'tap';
import { buildUser } from '../helpers/wharf.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';

t.test(
  'organization Settings → Webhooks: linked from the organization page for owners; add with repository events, its page, ping, redeliver, edit, delete',
  async (t) => {
    const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
    const db = w.running.services.db;
    const rx = await startReceiver(t);
    const { page } = await openBrowser(t);
    await signIn(page, w);

    await page.goto(`${w.url}/demo`);
    await page.click('a:has-text("Webhooks")');
    t.equal(new URL(page.url()).pathname, '/-/orgs/demo/settings/hooks', 'the organization page links its webhooks for an owner');
    t.match(await page.textContent('main'), 'No webhooks yet');
    await page.click('text=Add webhook');
    t.equal(await page.locator('input[name=events][value=repository]').count(), 1, 'the repository event is offered');
    t.equal(await page.locator('input[name=events][value=import]').count(), 1, 'the import event is offered');
    await page.fill('#url', `${rx.url}/org`);
    await page.check('#mode-select');
    await page.check('input[name=events][value=push]');
    await page.check('input[name=events][value=repository]');
    await screenshot(page, 'org-webhook-form');
    await page.click('button:has-text("Add webhook")');
    t.match(await page.textContent('main'), 'Copy it now', 'the generated secret is shown once');
    const secret = await page.inputValue('#new-secret');
    const [hook] = (await w.api('GET', '/api/v1/orgs/demo/webhooks')).body;
    t.same(hook.events, ['push', 'repository']);
    rx.secrets.set(hook.id, secret);
    await page.click('text=Go to the webhook');
    t.equal(new URL(page.url()).pathname, `/-/orgs/demo/settings/hooks/${hook.id}`);

    // A repository made after the webhook: its `repository` created arrives, signed.
    t.equal((await w.api('POST', '/api/v1/orgs/demo/repos', { body: { name: 'later' } })).status, 201);
    await waitFor(() => rx.received.some((r) => r.event === 'repository'), { what: 'repository created' });
    t.ok(rx.received.find((r) => r.event === 'repository')!.signatureOk, 'signed');
    await deliveriesSettled(db, { webhookId: hook.id, count: 2 });

    await page.reload();
    t.match(await page.textContent('main'), 'repository', 'the delivery is listed');
    await page.click('button:has-text("Ping")');
    t.match(await page.textContent('main'), 'Ping queued.');
    await waitFor(() => rx.received.filter((r) => r.event === 'ping').length === 2, { what: 'the second ping' });
    await deliveriesSettled(db, { webhookId: hook.id, count: 3 });
    await page.goto(`${w.url}/-/orgs/demo/settings/hooks/${hook.id}`);
    await page.locator('.deliveries a.event').first().click();
    await page.locator('main button:has-text("Redeliver")').first().click();
    t.match(await page.textContent('main'), 'Redelivery queued.');
    await deliveriesSettled(db, { webhookId: hook.id, count: 4 });
    await screenshot(page, 'org-webhook-page');

    await page.goto(`${w.url}/-/orgs/demo/settings/hooks/${hook.id}/edit`);
    t.ok(await page.isChecked('input[name=events][value=repository]'), 'the edit form shows its events');
    await page.uncheck('input[name=active]');
    await page.click('button:has-text("Update webhook")');
    t.equal((await w.api('GET', `/api/v1/orgs/demo/webhooks/${hook.id}`)).body.active, false);

    await page.goto(`${w.url}/-/orgs/demo/settings/hooks`);
    t.match(await page.textContent('main'), `${rx.url}/org`, 'listed');
    await page.click('a.danger:has-text("Delete")');
    await page.click('button:has-text("Yes, delete webhook")');
    t.same((await w.api('GET', '/api/v1/orgs/demo/webhooks')).body, [], 'deleted');

    // A member sees no link and gets a 403 page; someone outside the organization a 404.
    const member = await buildUser(w, 'mia', { org: 'demo', role: 'member' });
    const outsider = await buildUser(w, 'oz', { org: 'elsewhere', role: 'owner' });
    for (const [who, token, status] of [
      ['member', member.token, 403],
      ['outsider', outsider.token, 404],
    ] as const) {
      const other = await openBrowser(t);
      await signIn(other.page, w, token);
      const answer = await other.page.goto(`${w.url}/-/orgs/demo/settings/hooks`);
      t.equal(answer?.status(), status, `${who}: ${status}`);
      if (who === 'member') {
        await other.page.goto(`${w.url}/demo`);
        t.equal(await other.page.locator('a:has-text("Webhooks")').count(), 0, 'no link for a member');
      }
    }
  },
);
