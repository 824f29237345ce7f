import Ajv, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { validationFailed, type ErrorDetail } from '../errors/wharfError.ts';

// RFC 3339 allows a leap second (`23:59:60`) that Date.parse cannot read (NaN would reach the database as a 500):
// a `date-time` must also be a time JavaScript can hold, as Go's time.Parse (Gitea) requires too.
const rfc3339 = addFormats.default.get('date-time') as { validate: (s: string) => boolean };

/** An ajv instance with the formats of ajv-formats, `date-time` read as above. */
export function newAjv(options: Options) {
  const ajv = new Ajv.default(options);
  addFormats.default(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)) });
  return ajv;
}

/** The ajv of inputs (bodies, paths, queries, forms): every failure named, defaults filled in. */
export const inputAjv = newAjv({ allErrors: true, strict: true, useDefaults: true, coerceTypes: false });

/** Schemas declared and not compiled yet (compileOnUse). */
const uncompiled = new Set<() => ValidateFunction>();

/**
 * A schema compiled by `ajv` when it first checks a value, then kept. Compiling every
 * route's schemas when their modules load took about 0.35 s of each start here (a `wharf
 * serve`, a CLI command, every test file); a request pays a millisecond or two for its
 * route's schema once. compileDeclaredSchemas compiles the rest at once.
 */
export function compileOnUse(ajv: ReturnType<typeof newAjv>, schema: object): () => ValidateFunction {
  let check: ValidateFunction | undefined;
  const get = () => {
    if (!check) {
      check = ajv.compile(schema);
      uncompiled.delete(get);
    }
    return check;
  };
  uncompiled.add(get);
  return get;
}

/**
 * Compiles every schema declared so far and not yet used, and says how many: a schema that
 * ajv's strict mode refuses throws here (a test calls it with every module loaded) rather
 * than on a user's first request.
 */
export function compileDeclaredSchemas(): number {
  const pending = [...uncompiled];
  for (const get of pending) get();
  return pending.length;
}

/** What each input `pattern` asks for, in words (see worded()). */
const PATTERN_MESSAGES = new Map<string, string>();

/**
 * A schema's `pattern` with the message that refuses a value it does not match, in words
 * ("must be letters, digits …"), where ajv would say `must match pattern "^[A-Za-z0-9]…$"`.
 * Declared where the schema is: `pattern: worded('^…$', 'must be …')`.
 */
export function worded<const P extends string>(pattern: P, message: string): P {
  PATTERN_MESSAGES.set(pattern, message);
  return pattern;
}

/** The words declared for a pattern with worded(), if any. */
export function patternMessage(pattern: string): string | undefined {
  return PATTERN_MESSAGES.get(pattern);
}

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
    } else if (e.keyword === 'pattern') {
      message = patternMessage((e.params as { pattern: string }).pattern) ?? message;
    }
    return { path: path || '/', message };
  });
}

/** Compiles a JSON schema once, on first use; the returned check answers the details of every failure, none when the value matches. */
export function compileDetails(schema: object, prefix = ''): (value: unknown) => ErrorDetail[] {
  const compiled = compileOnUse(inputAjv, schema);
  return (value: unknown) => {
    const check = compiled();
    return check(value) ? [] : toDetails(check.errors, prefix);
  };
}

/** Compiles a JSON schema once, on first use; the returned parser checks a value and returns it typed, or throws a 422 naming every failure. */
export function compile<const S extends JSONSchema>(schema: S, prefix = ''): (value: unknown) => FromSchema<S> {
  const parse = compileUntyped(schema as object, prefix);
  return (value: unknown) => parse(value) as FromSchema<S>;
}

/** compile() for callers that type the value themselves (the route registry, whose schemas are only known as JSONSchema there). */
export function compileUntyped(schema: object, prefix = ''): (value: unknown) => unknown {
  const compiled = compileOnUse(inputAjv, schema);
  return (value: unknown) => {
    const check = compiled();
    if (!check(value)) throw validationFailed(toDetails(check.errors, prefix));
    return value;
  };
}
