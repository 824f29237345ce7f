/** What the attempt history keeps of one attempt (a `delivery_attempts` row), whatever carried it. */
export interface AttemptRecord {
  startedAt: number;
  endedAt: number;
  durationMs: number;
  /** The receiver's answer code (an HTTP status), or null when no answer came. */
  statusCode: number | null;
  /** Why no answer came (SPEC §5.3's short texts), or null. */
  error: string | null;
  /** What was sent beside the body, as kept (secret values masked). */
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string> | null;
  /** The start of the answer's body, as text. */
  responseBody: string | null;
}

/**
 * How an attempt ended, in the dispatcher's terms (attempt/transport.ts says what each
 * means): what the schedule and the endpoint health read, whatever carried the attempt.
 */
export type OutcomeKind = 'delivered' | 'retryLater' | 'gone' | 'failed';
