import { html, type SafeHtml } from '../html.ts';

/** Errors by form field, from 422 details (JSON Pointers) or the form's own checks; `_` holds the rest. */
export type FieldErrors = Record<string, string[]>;

/** A field of a form as its errors point at it: the key its errors are filed under, the id of the control to focus, its label. */
export interface FormField {
  key: string;
  id: string;
  label: string;
}

/** What a form renders for its errors. */
export interface FormErrorsView {
  /** Every error, at the top of the form: announced when the page arrives (role="alert"), each field's linked to it. */
  summary: SafeHtml | '';
  /** A control's attributes: aria-invalid, aria-describedby to its message, and autofocus on the first invalid one. */
  attrs(key: string): SafeHtml | '';
  /** The message under a field, which its control's aria-describedby names. */
  message(key: string): SafeHtml | '';
}

/**
 * How a form that came back with errors shows them: after a failed submit the page that
 * answers puts focus on the first invalid field (`fields` in the order they appear) with
 * `autofocus`, so no script is needed, and a screen reader reads that field with its
 * message; the summary is announced as an alert. With only general errors (`_`) the
 * summary itself takes the focus.
 */
export function formErrors(errors: FieldErrors, fields: FormField[]): FormErrorsView {
  const first = fields.find((f) => errors[f.key]?.length)?.key;
  const label = (key: string) => fields.find((f) => f.key === key);
  const items = Object.entries(errors).flatMap(([key, messages]) => {
    const field = key === '_' ? undefined : label(key);
    return messages.map((m) => (field ? html`<li><a href="#${field.id}">${field.label}</a>: ${m}</li>` : html`<li>${m}</li>`));
  });
  const count = Object.values(errors).reduce((n, m) => n + m.length, 0);
  const summary = count
    ? html`<div class="flash error" role="alert" id="form-errors" tabindex="-1" ${first ? '' : html`autofocus`}><p>${count === 1 ? 'Fix this to continue:' : `Fix these ${count} problems to continue:`}</p><ul>${items}</ul></div>`
    : '';
  return {
    summary,
    attrs: (key) => (errors[key]?.length ? html`aria-invalid="true" aria-describedby="${key}-error" ${key === first ? html`autofocus` : ''}` : ''),
    message: (key) => (errors[key]?.length ? html`<p class="field-error" id="${key}-error">${errors[key].join('; ')}</p>` : ''),
  };
}
