import { STATUS_CODES } from 'node:http';
import type { DeliveryOutcome } from '../transport.ts';
import type { HttpResult } from './send.ts';
import { retryAfterAt } from './retryAfter.ts';

/**
 * What an HTTP attempt means for the dispatcher (SPEC §5.3, §5.5): a 2xx delivered it; a
 * 410 says the receiver is gone; a 429 or 503 asks to retry later, at its Retry-After when
 * readable; any other answer, or none, failed. The failure's reason is the status with its
 * name (`500 Internal Server Error`), or the connection's error text.
 */
export function httpOutcome(result: HttpResult, requestHeaders: Record<string, string>): DeliveryOutcome {
  const { statusCode, error, responseHeaders, responseBody, startedAt, endedAt, durationMs } = result;
  const record = { startedAt, endedAt, durationMs, statusCode, error, requestHeaders, responseHeaders, responseBody };
  if (statusCode === null) return { kind: 'failed', answered: false, reason: error ?? 'failed', record };
  if (statusCode >= 200 && statusCode < 300) return { kind: 'delivered', record };
  const reason = `${statusCode} ${STATUS_CODES[statusCode] ?? ''}`.trim();
  if (statusCode === 410) return { kind: 'gone', reason, record };
  if (statusCode === 429 || statusCode === 503)
    return { kind: 'retryLater', retryAt: retryAfterAt(statusCode, responseHeaders?.['retry-after'], endedAt), reason, record };
  return { kind: 'failed', answered: true, reason, record };
}
