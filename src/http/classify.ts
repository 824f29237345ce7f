import Ajv, { type ErrorObject } from 'ajv';
import { baseCode, type BaseCode, type ErrorCode } from '../errors/codes.ts';
import { WharfError, type ErrorDetail } from '../errors/wharfError.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { toDetails } from './validate.ts';

/** What every surface needs to answer an error: a status, a SPEC §4 code, a safe message, details and headers. */
export interface Classified {
  status: number;
  code: BaseCode;
  message: string;
  details: ErrorDetail[];
  headers: Record<string, string>;
}

/** The HTTP status of each SPEC §4 code: the one place codes meet statuses. */
export const STATUS: Record<BaseCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  internal: 500,
};

/** Finer codes whose answer has a status of its own (the code shown is still the base one). */
const FINER_STATUS: Partial<Record<ErrorCode, number>> = { length_required: 411, method_not_allowed: 405 };

const answer = (code: BaseCode, message: string, details: ErrorDetail[] = [], headers: Record<string, string> = {}, status = STATUS[code]): Classified => ({
  status,
  code,
  message,
  details,
  headers,
});

/**
 * Maps anything thrown to what a surface shows: Wharf's own errors by their code; a unique
 * violation of either database as 409; an ajv ValidationError as 422; the client faults Koa,
 * raw-body and http-errors raise (marked `expose`) as 413, 415 or 400. Anything else is a
 * bare 500 `internal` whose message says nothing of the error (the caller logs it).
 */
export function classify(err: unknown): Classified {
  if (err instanceof WharfError) {
    const code = baseCode(err.code);
    return answer(code, err.message, err.details, err.headers, FINER_STATUS[err.code] ?? STATUS[code]);
  }
  if (isUniqueViolation(err)) return answer('conflict', 'Already exists');
  // Ajv types a ValidationError's errors as Partial; its validators throw them whole.
  if (err instanceof Ajv.ValidationError) return answer('validation_failed', 'Validation failed', toDetails(err.errors as ErrorObject[]));
  const e = err as { expose?: unknown; status?: unknown; message?: unknown } | null;
  if (e?.expose && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    if (e.status === 413) return answer('payload_too_large', 'Request body is over its limit');
    if (e.status === 415) return answer('unsupported_media_type', 'Request body must be application/json');
    return answer('bad_request', String(e.message));
  }
  return answer('internal', 'Internal error');
}
