import { notFound } from '../http/errors.ts';
import { MAX_INT } from '../domain/inputs/numbers.ts';

/** Largest value of the 32-bit integer columns (ids, issue numbers): Postgres refuses to compare with more. */
export { MAX_INT };

/**
 * A positive integer path id; anything else is a 404, as no such thing exists.
 * Ids over `max` (a 32-bit column by default) are 404 too: Postgres would answer
 * an out-of-range comparison with an error, not with "no row".
 */
export function idParam(value: string | undefined, what = 'Not found', max: number = MAX_INT): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw notFound(what);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n > max) throw notFound(what);
  return n;
}
