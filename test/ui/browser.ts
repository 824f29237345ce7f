import { chromium, type Browser, type Page } from 'playwright-core';
import { MOUNTS } from '../../src/components.ts';
import { uiMount } from '../../src/ui/index.ts';
import { startWharf, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';

/** Starts a Wharf as production runs it; the web UI is one of its mounts. */
export function startUiWharf(t: TestLike, options: Parameters<typeof startWharf>[1] = {}): Promise<TestWharf> {
  if (!MOUNTS.includes(uiMount)) throw new Error('the web UI is not in MOUNTS');
  return startWharf(t, options);
}

/**
 * Opens a page in headless Chromium: in the suite's shared Chromium when scripts/test.js
 * names one (WHARF_TEST_BROWSER, test/ui/browserServer.ts), else in one launched for the
 * test. Closed when the test ends (for the shared one: this test's contexts, and its
 * connection).
 */
export async function openBrowser(t: TestLike): Promise<{ browser: Browser; page: Page }> {
  const shared = process.env.WHARF_TEST_BROWSER;
  const browser = shared ? await chromium.connect(shared) : await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  return { browser, page };
}

/** Signs in through the form with a token and waits for the start page. */
export async function signIn(page: Page, w: TestWharf, token = w.adminToken): Promise<void> {
  await page.goto(`${w.url}/-/login`);
  await page.fill('#token', token);
  await Promise.all([page.waitForURL(`${w.url}/`), page.click('button[type=submit].primary')]);
}

/**
 * Whether the UI tests save screenshots for a person to look at: yes, unless
 * WHARF_UI_SCREENSHOTS=off (CI, where nobody does; a full-page PNG costs 0.3–0.7 s here).
 */
export const SCREENSHOTS = process.env.WHARF_UI_SCREENSHOTS !== 'off';

/** Saves a full-page screenshot under /tmp (never in the repository) for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  const suffix = process.env.TEST_DATABASE_URL ? '-pg' : '';
  await page.screenshot({ path: `/tmp/wharf-ui-${name}${suffix}.png`, fullPage: true });
}
