import type { Context } from 'koa';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { WEBHOOK_FIELDS } from '../../webhooks/input.ts';
import { MAX_CUSTOM_HEADERS, MAX_HEADER_NAME, MAX_HEADER_VALUE } from '../../webhooks/headers.ts';
import { formErrors, type FieldErrors, type FormErrorsView, type FormField } from './formErrors.ts';

/** The event types a webhook can subscribe to (SPEC §6), with the labels the form shows. */
export const EVENT_TYPES: [string, string][] = [
  ['push', 'Pushes'],
  ['pull_request', 'Pull requests'],
  ['issue', 'Issues'],
  ['comment', 'Comments'],
  ['release', 'Releases'],
  ['pipeline', 'Pipelines'],
  ['agent', 'Agent actions'],
];

/** The event types only organization webhooks offer (SPEC §5.4). */
export const ORG_EVENT_TYPES: [string, string][] = [
  ['repository', 'Repositories created, deleted or cut over'],
  ['import', 'Imports ended'],
];

/** What the webhook form holds, whether it came from a record or a submitted form. */
export interface HookValues {
  url: string;
  secret: string;
  mode: 'push' | 'all' | 'select';
  events: string[];
  active: boolean;
  branchFilter: string;
  /** `wharf` or `github` (anything else is named by the checker). */
  headerStyle: string;
  /** Deliveries per second at most, as typed ('' for none). */
  maxRate: string;
  /** Attempts in flight at most, as typed ('' for none). */
  maxConcurrency: string;
  /** Custom header rows: a name, a value (blank on an existing header: keep it), and whether to remove it. Values are never shown. */
  headers: HeaderRow[];
}

/** One custom header row of the form. */
export interface HeaderRow {
  name: string;
  value: string;
  remove: boolean;
}

/** A webhook record (SPEC §5.1) as form values; the secret is never known here. */
export function valuesFromRecord(record: {
  url: string;
  events: string[];
  active: boolean;
  branch_filter: string | null;
  header_style: string;
  header_names: string[];
  max_rate: number | null;
  max_concurrency: number | null;
}): HookValues {
  const mode = record.events.includes('*') ? 'all' : record.events.length === 1 && record.events[0] === 'push' ? 'push' : 'select';
  return {
    url: record.url,
    secret: '',
    mode,
    events: record.events.filter((e) => e !== '*'),
    active: record.active,
    branchFilter: record.branch_filter ?? '',
    headerStyle: record.header_style,
    maxRate: record.max_rate === null ? '' : String(record.max_rate),
    maxConcurrency: record.max_concurrency === null ? '' : String(record.max_concurrency),
    headers: record.header_names.map((name) => ({ name, value: '', remove: false })),
  };
}

/** A submitted form as values. */
export function valuesFromForm(form: URLSearchParams): HookValues {
  const mode = form.get('mode');
  return {
    url: (form.get('url') ?? '').trim(),
    secret: form.get('secret') ?? '',
    mode: mode === 'all' || mode === 'select' ? mode : 'push',
    events: form.getAll('events').filter((e) => [...EVENT_TYPES, ...ORG_EVENT_TYPES].some(([type]) => type === e)),
    active: form.get('active') === 'on',
    branchFilter: (form.get('branch_filter') ?? '').trim(),
    headerStyle: form.get('header_style') ?? 'wharf',
    maxRate: (form.get('max_rate') ?? '').trim(),
    maxConcurrency: (form.get('max_concurrency') ?? '').trim(),
    headers: headerRows(form),
  };
}

/** The custom header rows of a submitted form (`header_name`, `header_value`, and `header_remove` naming rows by index); blank rows dropped. */
function headerRows(form: URLSearchParams): HeaderRow[] {
  const names = form.getAll('header_name');
  const values = form.getAll('header_value');
  const removed = new Set(form.getAll('header_remove'));
  return names
    .slice(0, 100)
    .map((name, i) => ({ name: name.trim(), value: values[i] ?? '', remove: removed.has(String(i)) }))
    .filter((row) => row.name !== '' || row.value !== '');
}

/** The events a form's choice stands for. */
export function chosenEvents(values: HookValues): string[] {
  if (values.mode === 'all') return ['*'];
  if (values.mode === 'push') return ['push'];
  return values.events;
}

export type { FieldErrors } from './formErrors.ts';

/** The form's fields in the order they appear, as its errors name them. */
const FIELDS: FormField[] = [
  { key: 'url', id: 'url', label: 'Payload URL' },
  { key: 'content_type', id: 'content_type', label: 'Content type' },
  { key: 'secret', id: 'secret', label: 'Secret' },
  { key: 'events', id: 'event-0', label: 'Events' },
  { key: 'branch_filter', id: 'branch_filter', label: 'Branch filter' },
  { key: 'header_style', id: 'header_style', label: 'Header names' },
  { key: 'max_rate', id: 'max_rate', label: 'Most deliveries per second' },
  { key: 'max_concurrency', id: 'max_concurrency', label: 'Most attempts at once' },
  { key: 'headers', id: 'header_name_0', label: 'Custom headers' },
  { key: 'active', id: 'active', label: 'Active' },
];

/** Sorts SPEC §4 details under the form fields they name. */
export function fieldErrors(details: { path: string; message: string }[], fallback: string): FieldErrors {
  const errors: FieldErrors = {};
  const fields: Record<string, string> = {
    url: 'url',
    secret: 'secret',
    events: 'events',
    active: 'active',
    branch_filter: 'branch_filter',
    content_type: 'content_type',
    header_style: 'header_style',
    headers: 'headers',
    max_rate: 'max_rate',
    max_concurrency: 'max_concurrency',
  };
  for (const d of details) {
    const key = fields[d.path.split('/')[1] ?? ''] ?? '_';
    // A custom header's problem names the header: `/headers/<name>`.
    const header = key === 'headers' && d.path.split('/').length > 2 ? d.path.split('/').slice(2).join('/').replaceAll('~1', '/').replaceAll('~0', '~') : '';
    (errors[key] ??= []).push(key === '_' && d.path !== '/' ? `${d.path} ${d.message}` : header ? `${header}: ${d.message}` : d.message);
  }
  if (Object.keys(errors).length === 0) errors._ = [fallback];
  return errors;
}

/**
 * What the secret decides besides the signature: only a secret of the Standard Webhooks
 * form (`whsec_` and base64, what Wharf generates) also gets the `webhook-*` headers
 * (src/webhooks/secret.ts), so one typed in turns them off unless it has that form.
 */
function secretStyleNote(editing: boolean): SafeHtml {
  return html`${editing ? 'A generated secret' : 'A generated one'} has the Standard Webhooks form (<code>whsec_</code> and base64), and deliveries carry the Standard Webhooks headers (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) besides <code>X-Service-Signature</code>. A secret of your own turns the Standard Webhooks headers off unless it has that form; <code>X-Service-Signature</code> is signed with it either way.`;
}

/** The add/edit webhook form; `editing` changes the secret's meaning (blank keeps the current one). */
export function webhookForm(
  ctx: Context,
  action: string,
  values: HookValues,
  errors: FieldErrors,
  editing: boolean,
  eventTypes: [string, string][] = EVENT_TYPES,
): SafeHtml {
  const checked = (on: boolean) => (on ? html`checked` : '');
  const shown = formErrors(errors, FIELDS);
  const fieldError = (_: FieldErrors, key: string) => shown.message(key);
  const invalid = (_: FieldErrors, key: string) => shown.attrs(key);
  return html`<form method="post" action="${action}" class="stack hook-form">
  ${csrfField(ctx)}
  ${shown.summary}
  <label for="url">Payload URL</label>
  <input id="url" name="url" type="url" required maxlength="${WEBHOOK_FIELDS.url.maxLength}" placeholder="https://example.com/hooks/wharf" value="${values.url}" ${invalid(errors, 'url')}>
  ${fieldError(errors, 'url')}
  <label for="content_type">Content type</label>
  <select id="content_type" name="content_type"><option value="json" selected>application/json</option></select>
  ${fieldError(errors, 'content_type')}
  <label for="secret">Secret</label>
  <input id="secret" name="secret" type="password" autocomplete="new-password" maxlength="${WEBHOOK_FIELDS.secret.maxLength}" value="" ${errors.secret?.length ? invalid(errors, 'secret') : html`aria-describedby="secret-hint"`}>
  <p class="hint" id="secret-hint">${editing ? 'A secret is set. Leave this empty to keep it; type a new one to replace it.' : 'Leave empty and Wharf generates one (shown once, after saving).'}
    ${secretStyleNote(editing)}</p>
  ${fieldError(errors, 'secret')}
  <fieldset class="events">
    <legend>Which events would you like to trigger this webhook?</legend>
    <label class="choice"><input type="radio" name="mode" value="push" ${checked(values.mode === 'push')}> Just the push event</label>
    <label class="choice"><input type="radio" name="mode" value="all" ${checked(values.mode === 'all')}> Send me everything</label>
    <label class="choice"><input type="radio" name="mode" value="select" id="mode-select" ${checked(values.mode === 'select')}> Let me select individual events</label>
    <div class="event-boxes">${eventTypes.map(
      ([type, label], i) =>
        html`<label class="choice"><input type="checkbox" name="events" value="${type}" ${i === 0 ? html`id="event-0" ${invalid(errors, 'events')}` : ''} ${checked(values.events.includes(type))}> ${label} <code>${type}</code></label>`,
    )}</div>
    ${fieldError(errors, 'events')}
  </fieldset>
  <label for="branch_filter">Branch filter <span class="muted">(optional, push events)</span></label>
  <input id="branch_filter" name="branch_filter" maxlength="${WEBHOOK_FIELDS.branch_filter.maxLength}" placeholder="main or release/*" value="${values.branchFilter}" ${invalid(errors, 'branch_filter')}>
  ${fieldError(errors, 'branch_filter')}
  <label for="header_style">Header names</label>
  <select id="header_style" name="header_style" ${invalid(errors, 'header_style')}>
    <option value="wharf" ${values.headerStyle === 'github' ? '' : html`selected`}>Wharf's (X-Service-Event, X-Service-Signature …)</option>
    <option value="github" ${values.headerStyle === 'github' ? html`selected` : ''}>Wharf's and GitHub's (also X-GitHub-Event, X-Hub-Signature-256 …), for receivers written for GitHub</option>
  </select>
  ${fieldError(errors, 'header_style')}
  <label for="max_rate">Most deliveries per second <span class="muted">(optional, 1 to ${WEBHOOK_FIELDS.max_rate.maximum}; deliveries over it wait their turn, without failing)</span></label>
  <input id="max_rate" name="max_rate" inputmode="numeric" maxlength="4" value="${values.maxRate}" ${invalid(errors, 'max_rate')}>
  ${fieldError(errors, 'max_rate')}
  <label for="max_concurrency">Most attempts at once <span class="muted">(optional, 1 to ${WEBHOOK_FIELDS.max_concurrency.maximum}; for receivers that cannot take more requests at once)</span></label>
  <input id="max_concurrency" name="max_concurrency" inputmode="numeric" maxlength="2" value="${values.maxConcurrency}" ${invalid(errors, 'max_concurrency')}>
  ${fieldError(errors, 'max_concurrency')}
  ${headersFieldset(values.headers, errors, editing, shown)}
  <label class="choice"><input type="checkbox" name="active" id="active" ${checked(values.active)} ${invalid(errors, 'active')}> Active <span class="muted">— deliveries are sent when events happen</span></label>
  ${fieldError(errors, 'active')}
  <div class="actions"><button type="submit" class="primary">${editing ? 'Update webhook' : 'Add webhook'}</button></div>
</form>`;
}

/**
 * The custom headers: one row per header (name, value) and empty rows to add more, up
 * to the limit. Values are never shown: on edit an existing header's value is blank,
 * meaning "keep it", and its Remove box drops it. Rows are numbered for screen readers.
 */
function headersFieldset(rows: HeaderRow[], errors: FieldErrors, editing: boolean, view: FormErrorsView): SafeHtml {
  const shown = [
    ...rows,
    ...Array.from({ length: Math.max(1, Math.min(2, MAX_CUSTOM_HEADERS - rows.length)) }, () => ({ name: '', value: '', remove: false })),
  ];
  const row = (r: HeaderRow, i: number) =>
    html`<div class="header-row">
      <input id="header_name_${i}" name="header_name" maxlength="${MAX_HEADER_NAME}" autocomplete="off" spellcheck="false" placeholder="Authorization" aria-label="Header ${i + 1} name" value="${r.name}" ${i === 0 ? view.attrs('headers') : errors.headers ? html`aria-invalid="true" aria-describedby="headers-error"` : ''}>
      <input id="header_value_${i}" name="header_value" type="password" maxlength="${MAX_HEADER_VALUE}" autocomplete="off" aria-label="Header ${i + 1} value" placeholder="${editing && r.name !== '' && i < rows.length ? 'unchanged' : 'value'}" value="">
      ${editing && r.name !== '' && i < rows.length ? html`<label class="choice"><input type="checkbox" name="header_remove" value="${String(i)}" ${r.remove ? html`checked` : ''}> Remove <span class="sr-only">header ${r.name}</span></label>` : ''}
    </div>`;
  return html`<fieldset class="custom-headers">
    <legend>Custom headers <span class="muted">(optional)</span></legend>
    <p class="hint">Sent with every delivery, for example <code>Authorization</code> for a receiver behind a gateway. Values are stored encrypted and never shown again${editing ? '; leave a value blank to keep it' : ''}. At most ${MAX_CUSTOM_HEADERS}.</p>
    ${shown.map(row)}
    ${view.message('headers')}
  </fieldset>`;
}
