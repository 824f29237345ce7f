import type { Context } from 'koa';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { timeTag } from '../format.ts';

/** A delivery as the list gives it, with the detail fields (SPEC §5.3) when they were read. */
export interface Delivery {
  id: number;
  guid: string;
  event: string;
  action: string | null;
  status: 'pending' | 'success' | 'failed';
  result: string | null;
  status_code: number | null;
  error: string | null;
  attempts: number;
  timestamp: string | null;
  duration_ms: number | null;
  redelivery: boolean;
  created_at: string;
  next_attempt_at?: string | null;
  attempts_log?: { timestamp?: string; time?: string; status_code?: number | null; error?: string | null; duration_ms?: number | null }[];
  request?: { headers?: unknown; body?: unknown };
  response?: { status?: number | null; headers?: unknown; body?: unknown } | null;
}

/** The result as the list shows it: `Success`, `Failed 500`, `Failed timeout`, `Pending`. */
export function deliveryResult(d: Pick<Delivery, 'status' | 'status_code' | 'error' | 'attempts'>): string {
  if (d.status === 'success') return 'Success';
  // A pending delivery whose last attempt failed shows that failure; the retry is noted beside it.
  if (d.status === 'pending' && !(d.attempts > 0 && (d.status_code || d.error))) return 'Pending';
  return `Failed ${d.status_code ?? d.error ?? ''}`.trim();
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

function headersTable(headers: unknown): SafeHtml {
  const rows = headerRows(headers);
  if (rows.length === 0) return html`<p class="muted">No headers recorded.</p>`;
  return html`<table class="headers">${rows.map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</table>`;
}

function pre(text: string): SafeHtml {
  return text ? html`<pre class="body">${text}</pre>` : html`<p class="muted">Empty.</p>`;
}

/** One delivery, folded: result, event and time; unfolded: request, response, attempts and Redeliver. */
export function deliveryItem(ctx: Context, d: Delivery, redeliverAction: string): SafeHtml {
  const result = deliveryResult(d);
  const kind = result === 'Success' ? 'ok' : result === 'Pending' ? 'wait' : 'bad';
  const retrying = d.status === 'pending' && result !== 'Pending' ? html`<span class="badge">retrying</span>` : '';
  const attempts = d.attempts_log?.length
    ? html`<h4>Attempts</h4><ol class="attempts">${d.attempts_log.map(
        (a) =>
          html`<li>${timeTag(a.timestamp ?? a.time ?? null)} — ${a.status_code ?? a.error ?? '?'}${a.duration_ms != null ? html` <span class="muted">in ${a.duration_ms} ms</span>` : ''}</li>`,
      )}</ol>`
    : '';
  const response =
    d.response && d.response.status != null
      ? html`<h4>Response ${d.response.status ?? ''}</h4>${headersTable(d.response.headers)}${pre(bodyText(d.response.body))}`
      : html`<h4>Response</h4><p class="muted">${d.error ? `No response: ${d.error}` : 'No response yet.'}</p>`;
  const redeliver =
    d.status === 'pending'
      ? html`<p class="muted">Pending${d.next_attempt_at ? html` — next attempt ${timeTag(d.next_attempt_at)}` : ''}.</p>`
      : html`<form method="post" action="${redeliverAction}" class="actions">${csrfField(ctx)}<button type="submit">Redeliver</button></form>`;
  return html`<li class="delivery"><details>
  <summary><span class="result ${kind}">${result}</span> <code class="event">${d.event}${d.action ? `.${d.action}` : ''}</code>
  ${retrying}${d.redelivery ? html`<span class="badge">redelivery</span>` : ''}<span class="guid muted">${d.guid}</span>${timeTag(d.timestamp ?? d.created_at)}</summary>
  <div class="delivery-body">
    ${redeliver}
    <h4>Request headers</h4>${headersTable(d.request?.headers)}
    <h4>Request body</h4>${pre(bodyText(d.request?.body))}
    ${response}
    ${attempts}
  </div></details></li>`;
}
