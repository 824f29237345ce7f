import { html, type SafeHtml } from './html.ts';

/** A time (epoch ms or ISO string) to the second, in UTC, as a <time> element; '—' when absent. */
export function timeTag(value: number | string | null | undefined): SafeHtml {
  if (value === null || value === undefined || value === '') return html`<span class="muted">—</span>`;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return html`<span class="muted">—</span>`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;
}

/** The first seven hex digits of an object id. */
export function shortSha(sha: string): string {
  return sha.slice(0, 7);
}

/** "1 webhook", "3 webhooks". */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/**
 * Text that may break after `/`, `.`, `-`, `?`, `&`, `=`, `_` and `:` (a <wbr> after each),
 * so a URL or a GUID wraps between its parts on a narrow screen instead of mid-word or not at all.
 */
export function breakable(text: string): SafeHtml {
  return html`${text.split(/(?<=[/.\-?&=_:])/).map((part, i) => (i ? html`<wbr>${part}` : part))}`;
}
