import { NAME_PATTERN } from '../names.ts';
import { worded } from '../../util/schema.ts';

const NO_NUL = worded('^[^\\u0000]*$', 'must not contain a NUL character');

/**
 * A free-text field. NUL is refused because Postgres cannot store it in text
 * columns; without this, a `\u0000` in JSON would become a 500 there.
 */
export function text<const Min extends number, const Max extends number>(minLength: Min, maxLength: Max) {
  return { type: 'string', minLength, maxLength, pattern: NO_NUL } as const;
}

/** A login, organization or repository name (isValidName's further rules are checked by the callers). */
export const NAME = { type: 'string', pattern: NAME_PATTERN } as const;
