import type { Context } from 'koa';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { breakable, timeTag } from '../format.ts';
import type { Delivery } from '../../webhooks/deliveries.ts';
import type { DeliverySummary } from '../../webhooks/summaries.ts';
import type { AttemptDetail } from '../../webhooks/deliveries.ts';

/** Where a delivery stands, in words: the badge, its colour, and the attempt line beside it. */
export interface DeliveryState {
  kind: 'ok' | 'bad' | 'wait';
  /** `Delivered 200`, `Failed 500`, `Failed timeout`, `Held`, `Retrying`, `Queued`. */
  label: string;
}

/** How many attempts a delivery gets: the retry schedule's length (never fewer than it has made). */
export function attemptLimit(d: Pick<Delivery, 'attempts'>, scheduleLength: number): number {
  return Math.max(scheduleLength, d.attempts);
}

/** The last attempt's outcome: its status code, or the error when no answer came. */
function outcome(d: Pick<Delivery, 'status_code' | 'error'>): string {
  return String(d.status_code ?? d.error ?? 'no answer');
}

/** The badge of a delivery: success, failure for good, held (its webhook is paused), sending (a dispatcher holds it now), retrying (an attempt failed, another is due) or queued (none made yet). */
export function deliveryState(d: Pick<Delivery, 'status' | 'status_code' | 'error' | 'attempts' | 'next_attempt_at' | 'sending'>): DeliveryState {
  if (d.status === 'success') return { kind: 'ok', label: `Delivered${d.status_code ? ` ${d.status_code}` : ''}` };
  if (d.status === 'failed') return { kind: 'bad', label: `Failed ${outcome(d)}` };
  // Pending with no next attempt: held while its webhook is paused or disabled (SPEC §5.5).
  if (d.next_attempt_at === null) return { kind: 'wait', label: 'Held' };
  if (d.sending) return { kind: 'wait', label: 'Sending' };
  return d.attempts > 0 ? { kind: 'wait', label: 'Retrying' } : { kind: 'wait', label: 'Queued' };
}

/** The webhook list's one-line state of a webhook's last delivery: `Delivered`, `Failed 500`, `Retrying (attempt 2 of 4)`, `Queued`. */
export function shortState(
  d: Pick<Delivery, 'status' | 'status_code' | 'error' | 'attempts' | 'next_attempt_at' | 'sending'>,
  scheduleLength: number,
): DeliveryState {
  const state = deliveryState(d);
  if (d.status === 'success') return { kind: 'ok', label: 'Delivered' };
  if (state.label === 'Retrying') return { ...state, label: `Retrying (attempt ${d.attempts + 1} of ${attemptLimit(d, scheduleLength)})` };
  return state;
}

/**
 * The attempts of a delivery in words: `attempt 1 of 4 in 12 ms` when it ended; while it
 * retries, the failed attempt and the next one with its time (or that it is being sent);
 * while queued, the first.
 */
export function attemptLine(d: Delivery, scheduleLength: number): SafeHtml {
  const of = attemptLimit(d, scheduleLength);
  const took = d.duration_ms !== null ? html` in ${d.duration_ms} ms` : '';
  if (d.status !== 'pending') return html`attempt ${d.attempts} of ${of}${took}`;
  if (d.next_attempt_at === null) return html`attempt ${d.attempts + 1} of ${of} held until the webhook resumes (no attempt spent)`;
  // While a dispatcher holds it, next_attempt_at is the end of its hold (its lease), not a next attempt: the attempt is under way.
  const next = d.sending ? html`, being sent now` : html`, next at ${timeTag(d.next_attempt_at)}`;
  if (d.attempts === 0) return html`attempt 1 of ${of}${next}`;
  return html`attempt ${d.attempts} of ${of} failed (${outcome(d)}${took}) · attempt ${d.attempts + 1} of ${of}${next}`;
}

/**
 * What a delivery was: `push main`, `tag v1.2`, `issue opened #12`,
 * `pull_request synchronize #3`, `release published v1.2`, `ping`.
 */
export function deliveryLabel(d: Pick<DeliverySummary, 'event' | 'action' | 'ref' | 'subject'>): string {
  if (d.event === 'push' && d.ref) {
    if (d.ref.startsWith('refs/heads/')) return `push ${d.ref.slice('refs/heads/'.length)}`;
    if (d.ref.startsWith('refs/tags/')) return `tag ${d.ref.slice('refs/tags/'.length)}`;
    return `push ${d.ref}`;
  }
  const numbered = d.event === 'issue' || d.event === 'pull_request' || d.event === 'comment';
  const subject = d.subject === null ? '' : numbered ? `#${d.subject}` : d.subject;
  return [d.event, d.action, subject].filter(Boolean).join(' ');
}

/** One row of the deliveries list: state, what it was, its attempts, time and guid, linking to its own page. */
export function deliveryRow(ctx: Context, d: DeliverySummary, href: string, redeliverAction: string, scheduleLength: number): SafeHtml {
  const state = deliveryState(d);
  const redeliver =
    d.status === 'pending'
      ? ''
      : html`<form method="post" action="${redeliverAction}" class="inline">${csrfField(ctx)}<button type="submit" class="small" aria-label="Redeliver ${deliveryLabel(d)} (${d.guid})">Redeliver</button></form>`;
  return html`<li class="delivery">
  <div class="delivery-head"><span class="result ${state.kind}">${state.label}</span> <a class="event" href="${href}">${deliveryLabel(d)}</a>${d.redelivery ? html` <span class="badge">redelivery</span>` : ''}</div>
  <div class="delivery-meta"><span class="attempt">${attemptLine(d, scheduleLength)}</span> <span class="when">${timeTag(d.last_attempt_at ?? d.created_at)}</span></div>
  <div class="delivery-foot"><span class="guid">${breakable(d.guid)}</span>${redeliver}</div>
</li>`;
}

/** Headers given as an object or as [name, value] pairs, as name/value rows. */
function headerRows(headers: unknown): [string, string][] {
  if (Array.isArray(headers)) return headers.filter((h) => Array.isArray(h)).map((h) => [String(h[0]), String(h[1])]);
  if (headers && typeof headers === 'object') return Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]);
  return [];
}

/** A body for reading: JSON pretty-printed, anything else as it came. */
function bodyText(body: unknown): string {
  if (body === null || body === undefined || body === '') return '';
  if (typeof body !== 'string') return JSON.stringify(body, null, 2);
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** Header names and values as a definition list: stacked, so a narrow screen gives each value the whole width. */
function headersList(headers: unknown): SafeHtml {
  const rows = headerRows(headers);
  if (rows.length === 0) return html`<p class="muted">No headers recorded.</p>`;
  return html`<dl class="headers">${rows.map(([k, v]) => html`<div><dt>${k}</dt><dd>${breakable(v)}</dd></div>`)}</dl>`;
}

function pre(text: string, label: string): SafeHtml {
  // A scrolling region is focusable so keyboard users can scroll it (WCAG 2.1.1).
  return text ? html`<pre class="body" tabindex="0" aria-label="${label}">${text}</pre>` : html`<p class="muted">Empty.</p>`;
}

/** A delivery's own page: its state (a live region while it is pending), request, response and every attempt. */
export function deliveryDetail(
  ctx: Context,
  d: DeliverySummary,
  attempts: AttemptDetail[],
  body: string | null,
  redeliverAction: string,
  scheduleLength: number,
): SafeHtml {
  const state = deliveryState(d);
  const last = attempts[attempts.length - 1];
  const response = last
    ? last.status_code !== null
      ? html`<h2 id="response-heading">Response ${last.status_code}</h2><h3>Headers</h3>${headersList(last.response_headers)}<h3>Body</h3>${pre(bodyText(last.response_body), 'Response body')}`
      : html`<h2 id="response-heading">Response</h2><p>No response: ${last.error ?? 'no answer'}</p>`
    : html`<h2 id="response-heading">Response</h2><p class="muted">No attempt made yet.</p>`;
  const attemptList = attempts.length
    ? html`<ol class="attempts">${attempts.map(
        (a) =>
          html`<li><span class="strong">Attempt ${a.attempt}</span> ${timeTag(a.started_at)} · ${a.status_code ?? a.error ?? 'no answer'} <span class="muted">in ${a.duration_ms} ms</span></li>`,
      )}</ol>`
    : html`<p class="muted">None yet.</p>`;
  const actions =
    d.status === 'pending'
      ? ''
      : html`<form method="post" action="${redeliverAction}" class="actions">${csrfField(ctx)}<button type="submit">Redeliver</button></form>`;
  return html`<section class="card" aria-labelledby="delivery-state-heading">
  <h2 id="delivery-state-heading">Result</h2>
  <div aria-live="polite" data-live="delivery-state">
    <p><span class="result ${state.kind}">${state.label}</span> <code>${deliveryLabel(d)}</code>${d.redelivery ? html` <span class="badge">redelivery</span>` : ''}</p>
    <p>${attemptLine(d, scheduleLength)}</p>
    ${d.status === 'pending' ? html`<p class="muted" data-reload-after="2000">This page updates until the delivery has finished.</p>` : ''}
  </div>
  <dl class="facts" data-live="delivery-facts"><div><dt>Delivery id</dt><dd class="guid">${breakable(d.guid)}</dd></div><div><dt>Created</dt><dd>${timeTag(d.created_at)}</dd></div>
  <div><dt>Last attempt</dt><dd>${timeTag(d.last_attempt_at)}</dd></div></dl>
  ${actions}
</section>
<section class="card" aria-labelledby="request-heading" data-live="delivery-request"><h2 id="request-heading">Request</h2>
  <h3>Headers</h3>${last ? headersList(last.request_headers) : html`<p class="muted">Recorded with the first attempt.</p>`}
  <h3>Body</h3>${pre(bodyText(body), 'Request body')}
</section>
<section class="card" aria-labelledby="response-heading" data-live="delivery-response">${response}</section>
<section class="card" aria-labelledby="attempts-heading" data-live="delivery-attempts"><h2 id="attempts-heading">Attempts</h2>${attemptList}</section>`;
}
