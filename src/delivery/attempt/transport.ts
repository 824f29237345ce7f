import type { AttemptRecord, OutcomeKind } from '../store/attemptRecord.ts';

/**
 * Where and as what one delivery goes: the webhook's address, secret and header choices,
 * and the delivery's identity (guid, event, attempt number), which a transport may carry
 * in its envelope (HTTP sends them as headers). A claimed delivery is one.
 */
export interface DeliveryTarget {
  url: string;
  /** The webhook's stored (sealed) secret. */
  secret: string;
  /** True for a webhook of `header_style: "github"`. */
  github: boolean;
  /** The webhook's custom headers, sealed; null when it has none. */
  headers: string | null;
  hookId: number;
  guid: string;
  event: string;
  attempt: number;
}

/**
 * How one attempt ended, in the dispatcher's terms: the scheduling and the endpoint health
 * read the kind (and a retry's time, a failure's reason), the history writes the record.
 * - delivered: the receiver took it;
 * - retryLater: the receiver asked for another try, at `retryAt` or later (null: no time named);
 * - gone: the receiver says it no longer exists: no more attempts, the webhook is disabled;
 * - failed: no answer (`answered: false`) or a refusal; tried again on the schedule.
 * `reason` is the failure in a few words, as the endpoint health shows it.
 */
export type DeliveryOutcome =
  | Outcome<'delivered', object>
  | Outcome<'retryLater', { retryAt: number | null; reason: string }>
  | Outcome<'gone', { reason: string }>
  | Outcome<'failed', { answered: boolean; reason: string }>;

/** One kind of outcome (a kind the store and the schedule know) and what it carries beside the record. */
type Outcome<K extends OutcomeKind, Extra> = { kind: K; record: AttemptRecord } & Extra;

/**
 * A way to carry deliveries to one kind of target (HTTP is one: http/transport.ts). The
 * dispatcher is given one (createDispatcher's `transport`), so another kind of target
 * plugs in there without touching the attempt, the scheduling or the result writes.
 */
export interface DeliveryTransport {
  /**
   * Sends `body` to `target`, giving up after `timeoutMs`. Resolves with the outcome of
   * every attempt that started; rejects only when the attempt could not be made at all
   * (a key not loaded): then nothing was sent and the lease running out brings it back.
   */
  send(target: DeliveryTarget, body: Buffer, timeoutMs: number): Promise<DeliveryOutcome>;
  /** The target as a log line may name it: nothing secret (for HTTP, the URL's origin). */
  describe(target: DeliveryTarget): string;
  /** Lets go of connections; called once, when the dispatcher stops. */
  close(): Promise<void>;
}
