import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { validationFailed, type ErrorDetail } from './errors.ts';

const ajv = new Ajv.default({ allErrors: true, strict: true, useDefaults: true, coerceTypes: false });
addFormats.default(ajv);
// RFC 3339 allows a leap second (`23:59:60`) that Date.parse cannot read (NaN would reach the database as a 500):
// a `date-time` must also be a time JavaScript can hold, as Go's time.Parse (Gitea) requires too.
const rfc3339 = addFormats.default.get('date-time') as { validate: (s: string) => boolean };
ajv.addFormat('date-time', { type: 'string', validate: (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)) });

/** Turns ajv errors into SPEC §4 details: a JSON Pointer to the failing value and a message. */
export function toDetails(errors: ErrorObject[] | null | undefined, prefix = ''): ErrorDetail[] {
  return (errors ?? []).map((e) => {
    let path = prefix + e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path += `/${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
      message = 'is not a known field';
    }
    return { path: path || '/', message };
  });
}

/** Compiles a JSON schema once; the returned parser checks a value and returns it typed, or throws a 422 naming every failure. */
export function compile<const S extends JSONSchema>(schema: S, prefix = ''): (value: unknown) => FromSchema<S> {
  const parse = compileUntyped(schema as object, prefix);
  return (value: unknown) => parse(value) as FromSchema<S>;
}

/** compile() for callers that type the value themselves (the route registry, whose schemas are only known as JSONSchema there). */
export function compileUntyped(schema: object, prefix = ''): (value: unknown) => unknown {
  const check = ajv.compile(schema as object);
  return (value: unknown) => {
    if (!check(value)) throw validationFailed(toDetails(check.errors, prefix));
    return value;
  };
}

/** Checks a value against a compiled schema: null when it matches, else the ajv errors. */
export type Checker = (value: unknown) => ErrorObject[] | null;

/** Checks answers, never changing them (no defaults filled in), and stops at the first failure. */
const answerAjv = new Ajv.default({ allErrors: false, strict: true, useDefaults: false, coerceTypes: false });
addFormats.default(answerAjv);
answerAjv.addFormat('date-time', { type: 'string', validate: (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)) });

/** Compiles a schema an answer must match, once; the checker returns null when it matches, else the errors. */
export function compileAnswer(schema: JSONSchema): Checker {
  const check = answerAjv.compile(schema as object);
  return (value) => (check(value) ? null : (check.errors ?? []));
}

// Only a plain decimal is a number in a path or query: ajv's coerceTypes would also take
// '1e2', ' 1', '+1' and '0x10', which Wharf has always refused.
const DECIMAL = /^(0|[1-9]\d{0,15})$/;

/**
 * Turns the strings of a path or query string into what its object schema declares: the
 * last of a repeated query parameter, and integers from plain decimals. Anything else
 * stays a string for the schema to refuse.
 */
export function fromStrings(schema: JSONSchema, raw: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const properties = (typeof schema === 'object' && (schema as { properties?: Record<string, { type?: unknown }> }).properties) || {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const text = Array.isArray(value) ? value[value.length - 1] : value;
    if (text === undefined) continue;
    out[key] = properties[key]?.type === 'integer' && DECIMAL.test(text) ? Number(text) : text;
  }
  return out;
}

/** Checks the strings of a path or query string: the value read by the schema, or the details of every failure. */
export type StringsChecker = (raw: Record<string, string | string[] | undefined>) => { value: unknown } | { details: ErrorDetail[] };

/** Compiles an object schema for a path or query string once; the checker returns the value (typed by the route), or the details of every failure. */
export function compileStrings(schema: JSONSchema): StringsChecker {
  const check = ajv.compile(schema as object);
  return (raw) => {
    const value = fromStrings(schema, raw);
    return check(value) ? { value } : { details: toDetails(check.errors) };
  };
}
