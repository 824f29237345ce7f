import type { ErrorCode } from './codes.ts';

/** One entry of an error's `details`: a JSON Pointer into the input and what is wrong there. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * Wharf's one error: a stable code, a message safe to show to whoever made the request,
 * details naming each bad input, and headers the answer should carry (Retry-After).
 * It knows nothing of HTTP: classify() (src/http/classify.ts) gives each code its status,
 * and each surface (API, LFS, web UI, CLI) only formats the result.
 */
export class WharfError extends Error {
  override name = 'WharfError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The input cannot be read at all (malformed JSON, a cut-short body). */
export const badRequest = (message = 'Malformed JSON') => new WharfError('bad_request', message);
/** No credentials, or credentials that match nothing. */
export const unauthorized = (message = 'A valid access token is required', headers: Record<string, string> = {}) =>
  new WharfError('unauthorized', message, [], headers);
/** Known caller, not allowed to do this. */
export const forbidden = (message = 'This token may not do that') => new WharfError('forbidden', message);
/** No such thing, or not visible to the caller. */
export const notFound = (message = 'Not found') => new WharfError('not_found', message);
/** The request clashes with the state of things (a taken name, a delivery in flight). */
export const conflict = (message: string, details: ErrorDetail[] = []) => new WharfError('conflict', message, details);
/** What the operation would create exists already; shown as a conflict. */
export const alreadyExists = (message: string) => new WharfError('already_exists', message);
/** A body over its limit of `limit` bytes. */
export const payloadTooLarge = (limit: number) => new WharfError('payload_too_large', `Request body is over the limit of ${limit} bytes`);
/** A body of a type the operation does not take. */
export const unsupportedMediaType = () => new WharfError('unsupported_media_type', 'Request body must be application/json');
/** Readable input that breaks the rules; `details` names every failure. */
export const validationFailed = (details: ErrorDetail[], message = 'Validation failed') => new WharfError('validation_failed', message, details);
/** Over the quota; try again after `retryAfterSeconds`. */
export const rateLimited = (retryAfterSeconds: number, message = 'Too many requests') =>
  new WharfError('rate_limited', message, [], { 'Retry-After': String(retryAfterSeconds) });
/** A body that stalled (`idle`) or took too long in all (`total`). */
export const requestTimeout = (why: 'idle' | 'total', ms: number) =>
  new WharfError('request_timeout', why === 'idle' ? `The request body sent nothing for ${ms / 1000} s` : `The request body took over ${ms / 1000} s`);
