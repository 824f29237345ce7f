/**
 * Fields read from a thrown value, which TypeScript knows only as `unknown`: each reads as
 * `err?.field` would on any value (undefined for null, undefined or a value without it).
 */
type Fields = { code?: unknown; name?: unknown; cause?: unknown } | null | undefined;

/** The `code` of a thrown value: a Node system error's ('ENOENT'), a driver's ('23505', 'SQLITE_CONSTRAINT_UNIQUE'), undici's. */
export function errorCode(err: unknown): unknown {
  return (err as Fields)?.code;
}

/** The `name` of a thrown value ('TimeoutError'). */
export function errorName(err: unknown): unknown {
  return (err as Fields)?.name;
}

/** The `cause` of a thrown value: the error it wraps, if any. */
export function errorCause(err: unknown): unknown {
  return (err as Fields)?.cause;
}
