import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { SCREENSHOTS } from './browser.ts';

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The widths every page is checked at: a phone (375 px, WCAG 1.4.10's 320 CSS px plus margin) and a laptop. */
export const AUDIT_WIDTHS = [375, 1280] as const;

/** The WCAG 2.2 AA rule sets of axe-core. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** axe-core's best-practice rules this UI holds to as well: headings without jumps, one h1, one main, a working skip link. */
const AXE_RULES = ['heading-order', 'page-has-heading-one', 'landmark-one-main', 'skip-link', 'empty-heading'];

/** The smallest text size any page may show (badges and GUIDs included). */
const MIN_TEXT_PX = 13;

/** Checks axe-core has no rule for: the skip link comes first, progress bars are named, no text is under MIN_TEXT_PX. */
async function ownChecks(page: Page): Promise<string[]> {
  return page.evaluate((minPx) => {
    const problems: string[] = [];
    const focusable = Array.from(
      document.querySelectorAll<HTMLElement>('a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]'),
    ).filter((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled);
    const first = focusable[0];
    const target = first?.getAttribute('href')?.startsWith('#') ? document.getElementById(first.getAttribute('href')!.slice(1)) : null;
    if (!first || !/skip/i.test(first.textContent ?? '') || !target || target.tagName !== 'MAIN')
      problems.push(`the first focusable element is not a skip link to <main> (it is ${first?.outerHTML.slice(0, 80) ?? 'nothing'})`);
    for (const bar of Array.from(document.querySelectorAll<HTMLElement>('progress, [role=progressbar]'))) {
      const labelled = bar.getAttribute('aria-label') || bar.getAttribute('aria-labelledby') || (bar.id && document.querySelector(`label[for="${bar.id}"]`));
      if (!labelled) problems.push(`a progress bar has no accessible name: ${bar.outerHTML.slice(0, 100)}`);
    }
    const small = new Set<string>();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!el || !node.textContent?.trim() || el.closest('.sr-only, .skip-link, script, style, noscript')) continue;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      const px = parseFloat(style.fontSize);
      if (px < minPx - 0.01) small.add(`"${node.textContent.trim().slice(0, 30)}" is ${px.toFixed(1)} px`);
    }
    if (small.size) problems.push(`text under ${minPx} px: ${[...small].slice(0, 6).join('; ')}`);
    return problems;
  }, MIN_TEXT_PX);
}

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
        if (!parentOver)
          out.push(
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''} (right edge ${Math.round(r.right)} px)`,
          );
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
    if (scrollWidth > viewport)
      problems.push(`${label} @${width}: page is ${scrollWidth} px wide (scrolls sideways); past the edge: ${(await overflowing(page)).join(', ')}`);
    // Evaluated through the DevTools protocol: the pages' CSP (script-src 'self') would refuse an injected <script>.
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
    // One run: the tags' rules, and the best-practice rules enabled beside them.
    const violations = (await page.evaluate(
      async ([tags, rules]) => {
        const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: unknown[] }> } }).axe;
        const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, rules: Object.fromEntries(rules.map((r) => [r, { enabled: true }])) });
        return result.violations;
      },
      [AXE_TAGS, AXE_RULES] as const,
    )) as AxeViolation[];
    for (const problem of await ownChecks(page)) problems.push(`${label} @${width}: ${problem}`);
    for (const v of violations)
      for (const node of v.nodes)
        problems.push(
          `${label} @${width}: [${v.id}] ${v.help} at ${node.target.join(' ')}: ${(node.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 300)} — ${node.html.slice(0, 160)}`,
        );
    if (SCREENSHOTS) await page.screenshot({ path: `/tmp/wharf-ui-${label}-${width}${suffix}.png`, fullPage: true });
  }
  if (before) await page.setViewportSize(before);
  return problems;
}

/** auditPage as a test assertion: passes when the page has no problem, else lists them all. */
export async function expectAccessible(t: { same: (found: unknown, wanted: unknown, message: string) => unknown }, page: Page, label: string): Promise<void> {
  const problems = await auditPage(page, label);
  t.same(problems, [], `${label}: fits 375 and 1280 px, no WCAG 2.2 AA violation${problems.length ? `\n${problems.join('\n')}` : ''}`);
}
