import type { Context } from 'koa';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { WEBHOOK_FIELDS } from '../../webhooks/input.ts';

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
}

/** A webhook record (SPEC §5.1) as form values; the secret is never known here. */
export function valuesFromRecord(record: { url: string; events: string[]; active: boolean; branch_filter: string | null; header_style: string }): HookValues {
  const mode = record.events.includes('*') ? 'all' : record.events.length === 1 && record.events[0] === 'push' ? 'push' : 'select';
  return {
    url: record.url,
    secret: '',
    mode,
    events: record.events.filter((e) => e !== '*'),
    active: record.active,
    branchFilter: record.branch_filter ?? '',
    headerStyle: record.header_style,
  };
}

/** A submitted form as values. */
export function valuesFromForm(form: URLSearchParams): HookValues {
  const mode = form.get('mode');
  return {
    url: (form.get('url') ?? '').trim(),
    secret: form.get('secret') ?? '',
    mode: mode === 'all' || mode === 'select' ? mode : 'push',
    events: form.getAll('events').filter((e) => EVENT_TYPES.some(([type]) => type === e)),
    active: form.get('active') === 'on',
    branchFilter: (form.get('branch_filter') ?? '').trim(),
    headerStyle: form.get('header_style') ?? 'wharf',
  };
}

/** The events a form's choice stands for. */
export function chosenEvents(values: HookValues): string[] {
  if (values.mode === 'all') return ['*'];
  if (values.mode === 'push') return ['push'];
  return values.events;
}

/** Errors by form field, from 422 details (JSON Pointers) or the form's own checks; `_` holds the rest. */
export type FieldErrors = Record<string, string[]>;

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
  };
  for (const d of details) {
    const key = fields[d.path.split('/')[1] ?? ''] ?? '_';
    (errors[key] ??= []).push(key === '_' && d.path !== '/' ? `${d.path} ${d.message}` : d.message);
  }
  if (Object.keys(errors).length === 0) errors._ = [fallback];
  return errors;
}

function fieldError(errors: FieldErrors, field: string): SafeHtml | '' {
  return errors[field] ? html`<p class="field-error" id="${field}-error">${errors[field].join('; ')}</p>` : '';
}

function invalid(errors: FieldErrors, field: string): SafeHtml | '' {
  return errors[field] ? html`aria-invalid="true" aria-describedby="${field}-error"` : '';
}

/** The add/edit webhook form; `editing` changes the secret's meaning (blank keeps the current one). */
export function webhookForm(ctx: Context, action: string, values: HookValues, errors: FieldErrors, editing: boolean): SafeHtml {
  const checked = (on: boolean) => (on ? html`checked` : '');
  const general = errors._ ? html`<div class="flash error" role="alert"><ul>${errors._.map((e) => html`<li>${e}</li>`)}</ul></div>` : '';
  return html`<form method="post" action="${action}" class="stack hook-form">
  ${csrfField(ctx)}
  ${general}
  <label for="url">Payload URL</label>
  <input id="url" name="url" type="url" required maxlength="${WEBHOOK_FIELDS.url.maxLength}" placeholder="https://example.com/hooks/wharf" value="${values.url}" ${invalid(errors, 'url')}>
  ${fieldError(errors, 'url')}
  <label for="content_type">Content type</label>
  <select id="content_type" name="content_type"><option value="json" selected>application/json</option></select>
  ${fieldError(errors, 'content_type')}
  <label for="secret">Secret</label>
  <input id="secret" name="secret" type="password" autocomplete="new-password" maxlength="${WEBHOOK_FIELDS.secret.maxLength}" value="" ${invalid(errors, 'secret')}>
  <p class="hint">${editing ? 'A secret is set. Leave this empty to keep it; type a new one to replace it.' : 'Leave empty and Wharf generates one (shown once, after saving).'}</p>
  ${fieldError(errors, 'secret')}
  <fieldset class="events">
    <legend>Which events would you like to trigger this webhook?</legend>
    <label class="choice"><input type="radio" name="mode" value="push" ${checked(values.mode === 'push')}> Just the push event</label>
    <label class="choice"><input type="radio" name="mode" value="all" ${checked(values.mode === 'all')}> Send me everything</label>
    <label class="choice"><input type="radio" name="mode" value="select" id="mode-select" ${checked(values.mode === 'select')}> Let me select individual events</label>
    <div class="event-boxes">${EVENT_TYPES.map(
      ([type, label]) =>
        html`<label class="choice"><input type="checkbox" name="events" value="${type}" ${checked(values.events.includes(type))}> ${label} <code>${type}</code></label>`,
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
  <label class="choice"><input type="checkbox" name="active" ${checked(values.active)}> Active <span class="muted">— deliveries are sent when events happen</span></label>
  ${fieldError(errors, 'active')}
  <div class="actions"><button type="submit" class="primary">${editing ? 'Update webhook' : 'Add webhook'}</button></div>
</form>`;
}
