import type { ErrorObject } from 'ajv';
import type { JSONSchema } from 'json-schema-to-ts';
import { compileOnUse, inputAjv, newAjv, toDetails } from '../util/schema.ts';
import type { ErrorDetail } from './errors.ts';

// The ajv of inputs and its parsers live in src/util/schema.ts, where the domain can use them too.
export { compile, compileUntyped, toDetails } from '../util/schema.ts';

/** Checks a value against a compiled schema: null when it matches, else the ajv errors. */
export type Checker = (value: unknown) => ErrorObject[] | null;

/** Checks answers, never changing them (no defaults filled in), and stops at the first failure. */
const answerAjv = newAjv({ allErrors: false, strict: true, useDefaults: false, coerceTypes: false });

/** Compiles a schema an answer must match, once, on first use; the checker returns null when it matches, else the errors. */
export function compileAnswer(schema: JSONSchema): Checker {
  const compiled = compileOnUse(answerAjv, schema as object);
  return (value) => {
    const check = compiled();
    return check(value) ? null : (check.errors ?? []);
  };
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

/** Compiles an object schema for a path or query string once, on first use; the checker returns the value (typed by the route), or the details of every failure. */
export function compileStrings(schema: JSONSchema): StringsChecker {
  const compiled = compileOnUse(inputAjv, schema as object);
  return (raw) => {
    const value = fromStrings(schema, raw);
    const check = compiled();
    return check(value) ? { value } : { details: toDetails(check.errors) };
  };
}
