import { idParam, MAX_INT } from './params.ts';
import { notFound } from '../http/errors.ts';

export { MAX_INT };

/**
 * A free-text field. NUL is refused because Postgres cannot store it in text
 * columns; without this, a `\u0000` in JSON would become a 500 there.
 */
export function text<const Min extends number, const Max extends number>(minLength: Min, maxLength: Max) {
  return { type: 'string', minLength, maxLength, pattern: '^[^\\u0000]*$' } as const;
}

/** A path number or id of a 32-bit column; anything else is a 404, as no such thing can exist. */
export function intParam(value: string | undefined, what: string): number {
  const n = idParam(value, what);
  if (n > MAX_INT) throw notFound(what);
  return n;
}
