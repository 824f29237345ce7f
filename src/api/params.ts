import { notFound } from '../http/errors.ts';

/** A positive integer path id; anything else is a 404, as no such thing exists. */
export function idParam(value: string | undefined, what = 'Not found'): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw notFound(what);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n > 2 ** 53) throw notFound(what);
  return n;
}
