/**
 * The stable snake_case codes of Wharf's errors, without any transport. The base codes
 * are SPEC §4's; a finer code says more for those who read it in code (a log, a test)
 * and always stands for one base code, which is what every surface shows.
 */
export const BASE_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'rate_limited',
  'request_timeout',
  'internal',
] as const;

/** One of SPEC §4's codes. */
export type BaseCode = (typeof BASE_CODES)[number];

/** Finer codes and the base code each stands for. */
export const FINER_CODES = {
  /** What an operation would create is already there (a name, a directory on disk). */
  already_exists: 'conflict',
  /** A body whose size must be declared up front was sent without Content-Length. */
  length_required: 'bad_request',
  /** A method the path does not take (git http-backend's own answer). */
  method_not_allowed: 'bad_request',
} as const satisfies Record<string, BaseCode>;

/** Any code a WharfError may carry. */
export type ErrorCode = BaseCode | keyof typeof FINER_CODES;

/** The SPEC §4 code a code stands for. */
export function baseCode(code: ErrorCode): BaseCode {
  return (FINER_CODES as Record<string, BaseCode>)[code] ?? (code as BaseCode);
}
