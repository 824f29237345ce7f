/** The webhook a payload is shaped for. */
export interface PayloadWebhook {
  hookId: number;
  /** True for a webhook of `header_style: "github"`. */
  github: boolean;
}

/** The event as stored for one delivery: its type and its payload's bytes (the claim read them). */
export interface StoredEvent {
  type: string;
  payload: Buffer;
}

/**
 * The bytes `webhook` receives for `event`: the one place a payload would be shaped per
 * target. Every webhook receives the stored payload unchanged today (it is what the
 * signature covers and what receivers dedupe on).
 */
export function payloadFor(_webhook: PayloadWebhook, event: StoredEvent): Buffer {
  return event.payload;
}
