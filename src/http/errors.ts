/**
 * The error vocabulary as the routes have always imported it. The errors themselves live in
 * src/errors/ and carry no HTTP status; classify() (./classify.ts) gives each its status.
 * `HttpError` is the old name of the one class, kept so route code reads unchanged.
 */
export {
  WharfError,
  WharfError as HttpError,
  badRequest,
  unauthorized,
  forbidden,
  notFound,
  conflict,
  alreadyExists,
  payloadTooLarge,
  unsupportedMediaType,
  validationFailed,
  rateLimited,
  requestTimeout,
  type ErrorDetail,
} from '../errors/wharfError.ts';
