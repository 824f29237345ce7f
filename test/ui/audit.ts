import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The widths every page is checked at: a phone (375 px, WCAG 1.4.10's 320 CSS px plus margin) and a laptop. */
export const AUDIT_WIDTHS = [375, 1280] as const;

/** The WCAG 2.2 AA rule sets of axe-core. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string; html: string }[];
}

/** Elements reaching past the viewport's right edge, as short selectors, for a readable failure. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > width + 1) {
        const parentOver = el.parentElement && el.parentElement.getBoundingClientRect().right > width + 1;
        if (!parentOver) out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''} (right edge ${Math.round(r.right)} px)`);
      }
      if (out.length >= 8) break;
    }
    return out;
  });
}

/**
 * Audits the page as it is, at each of AUDIT_WIDTHS: (1) no horizontal scrolling
 * (`scrollWidth` within the viewport, WCAG 1.4.10), (2) no axe-core WCAG 2.2 AA violation,
 * and saves a screenshot `/tmp/wharf-ui-<label>-<width>.png` (`-pg` on Postgres) to look at.
 * Returns the problems found, one readable line each; an empty list means the page passed.
 * The viewport is restored afterwards.
 */
export async function auditPage(page: Page, label: string): Promise<string[]> {
  const problems: string[] = [];
  const before = page.viewportSize();
  const suffix = process.env.TEST_DATABASE_URL ? '-pg' : '';
  for (const width of AUDIT_WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const { scrollWidth, viewport } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth }));
    if (scrollWidth > viewport) problems.push(`${label} @${width}: page is ${scrollWidth} px wide (scrolls sideways); past the edge: ${(await overflowing(page)).join(', ')}`);
    // Evaluated through the DevTools protocol: the pages' CSP (script-src 'self') would refuse an injected <script>.
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      (tags) => (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: unknown[] }> } }).axe.run(document, { runOnly: { type: 'tag', values: tags } }).then((r) => r.violations),
      AXE_TAGS,
    )) as AxeViolation[];
    for (const v of violations)
      for (const node of v.nodes)
        problems.push(`${label} @${width}: [${v.id}] ${v.help} at ${node.target.join(' ')}: ${(node.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 300)} — ${node.html.slice(0, 160)}`);
    await page.screenshot({ path: `/tmp/wharf-ui-${label}-${width}${suffix}.png`, fullPage: true });
  }
  if (before) await page.setViewportSize(before);
  return problems;
}

/** auditPage as a test assertion: passes when the page has no problem, else lists them all. */
export async function expectAccessible(t: { same: (found: unknown, wanted: unknown, message?: string) => unknown }, page: Page, label: string): Promise<void> {
  const problems = await auditPage(page, label);
  t.same(problems, [], `${label}: fits 375 and 1280 px, no WCAG 2.2 AA violation${problems.length ? `\n${problems.join('\n')}` : ''}`);
}
