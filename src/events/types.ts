/** The event types a webhook can subscribe to (SPEC §6); `ping` is sent only by the ping endpoint. */
export const EVENT_TYPES = ['push', 'pull_request', 'issue', 'comment', 'release', 'pipeline', 'agent', 'repository', 'import'] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** An event about to be written to the outbox. */
export interface NewEvent {
  /** The repository it is about; null for an organization's own event (an import that made none, a deleted repository). */
  repositoryId: number | null;
  /** The organization, for an event with no repository (otherwise the repository's is read). */
  orgId?: number;
  type: EventType;
  /** The payload's `action`, when the type has one. */
  action?: string;
  /** For push: the full ref name, so branch filters can match without parsing the payload. */
  ref?: string;
  senderId: number | null;
  /** The whole payload; serialized once, here, and never again. */
  payload: Record<string, unknown>;
  /**
   * When it happened, for an event recorded after the fact (a push, recorded just after
   * it landed): only webhooks that existed by then are sent it. Unset means now.
   */
  occurredAt?: number;
}
