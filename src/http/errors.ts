/** One entry of an error's `details`: a JSON Pointer into the request and what is wrong there. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** An error with an HTTP status and a stable snake_case code, rendered as SPEC §4 JSON. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message = 'Malformed JSON') => new HttpError(400, 'bad_request', message);
export const unauthorized = (message = 'A valid access token is required', headers: Record<string, string> = {}) =>
  new HttpError(401, 'unauthorized', message, [], headers);
export const forbidden = (message = 'This token may not do that') => new HttpError(403, 'forbidden', message);
export const notFound = (message = 'Not found') => new HttpError(404, 'not_found', message);
export const conflict = (message: string, details: ErrorDetail[] = []) => new HttpError(409, 'conflict', message, details);
export const payloadTooLarge = (limit: number) =>
  new HttpError(413, 'payload_too_large', `Request body is over the limit of ${limit} bytes`);
export const unsupportedMediaType = () =>
  new HttpError(415, 'unsupported_media_type', 'Request body must be application/json');
export const validationFailed = (details: ErrorDetail[], message = 'Validation failed') =>
  new HttpError(422, 'validation_failed', message, details);
export const rateLimited = (retryAfterSeconds: number) =>
  new HttpError(429, 'rate_limited', 'Too many requests', [], { 'Retry-After': String(retryAfterSeconds) });
