import type { Page } from 'playwright-core';
import { buildRepo, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';

/** A Wharf with demo/widgets, a receiver, and a signed-in page on the new-webhook form with its URL filled in (the receiver's, at `receiverPath`). */
export async function newWebhookForm(t: TestLike, receiverPath: string): Promise<{ w: TestWharf; rx: Awaited<ReturnType<typeof startReceiver>>; page: Page }> {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'widgets');
  const rx = await startReceiver(t);
  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/widgets/settings/hooks/new`);
  await page.fill('#url', `${rx.url}${receiverPath}`);
  return { w, rx, page };
}
