import type { Context, Next } from 'koa';
import { badRequest, notFound, validationFailed, type ErrorDetail } from './errors.ts';

// A NUL, or a UTF-16 surrogate without its pair (what a JSON "\ud800" or a bad
// %-escape decodes to). Postgres refuses both in text while SQLite would store
// them; refusing them before any route runs keeps both databases alike.
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when a string holds a NUL or a lone surrogate: text no database column should get. */
export function isBadText(value: string): boolean {
  return BAD_TEXT.test(value);
}

/** Decodes one %-escaped component (`+` as a space when `plus`); undefined when it is not valid UTF-8 or holds a NUL. */
function decodeComponent(value: string, plus: boolean): string | undefined {
  try {
    const decoded = decodeURIComponent(plus ? value.replace(/\+/g, ' ') : value);
    return isBadText(decoded) ? undefined : decoded;
  } catch {
    return undefined;
  }
}

/**
 * Refuses, before any route runs, a request whose path or query string decodes to
 * invalid UTF-8 or holds a NUL byte, with SPEC §4's body: a 404 for the path (no
 * repository, ref or file can have such a name, so nothing is at that address, as for
 * `..` in a file page's path), a 400 for the query string. Routes then only ever see
 * text that both databases store alike.
 */
export async function refuseBadInput(ctx: Context, next: Next) {
  if (ctx.path.split('/').some((segment) => decodeComponent(segment, false) === undefined)) {
    throw notFound('Nothing is at this address: the path is not valid UTF-8 or holds a NUL byte');
  }
  const query = ctx.querystring;
  if (query && query.split('&').some((pair) => pair.split('=').some((part) => decodeComponent(part, true) === undefined))) {
    throw badRequest('The query string is not valid UTF-8 or holds a NUL byte');
  }
  await next();
}

/** How deep a JSON body may nest: far more than any schema uses, far less than what exhausts the stack. */
export const MAX_JSON_DEPTH = 64;

/** JSON Pointers to every string (value or key) in a parsed JSON value that holds a NUL or a lone surrogate, and to nesting past MAX_JSON_DEPTH. */
export function badTextIn(value: unknown, pointer = '', found: ErrorDetail[] = [], depth = 0): ErrorDetail[] {
  if (found.length >= 20) return found;
  if (depth > MAX_JSON_DEPTH && value !== null && typeof value === 'object') {
    found.push({ path: pointer, message: `is nested more than ${MAX_JSON_DEPTH} levels deep` });
  } else if (typeof value === 'string') {
    if (isBadText(value)) found.push({ path: pointer || '/', message: 'must not hold NUL bytes or invalid Unicode' });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => badTextIn(item, `${pointer}/${i}`, found, depth + 1));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
      if (isBadText(key)) found.push({ path: `${pointer}/${escaped}`, message: 'is a key with NUL bytes or invalid Unicode' });
      badTextIn(item, `${pointer}/${escaped}`, found, depth + 1);
    }
  }
  return found;
}

// JSON text can carry a NUL or a lone surrogate only as a \u escape: a raw control
// character is malformed JSON, and valid UTF-8 encodes no surrogate. (An escaped
// backslash before "u0000" matches too, which only costs the full walk.)
const ESCAPED_BAD_TEXT = /\\u(?:0000|d[89a-f])/i;

/** True when a parsed JSON value nests deeper than MAX_JSON_DEPTH. */
function nestsTooDeep(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > MAX_JSON_DEPTH) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (nestsTooDeep(item, depth + 1)) return true;
  return false;
}

/**
 * Throws a 422 naming every string of a parsed JSON body that no database column should
 * get, and nesting too deep to walk. `value` is `text` parsed: a body whose text holds
 * no suspect escape is only checked for depth (no pointer is built for each string).
 */
export function refuseBadText(value: unknown, text: string): void {
  if (!ESCAPED_BAD_TEXT.test(text) && !nestsTooDeep(value)) return;
  const found = badTextIn(value);
  if (found.length > 0) throw validationFailed(found);
}
