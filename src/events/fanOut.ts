import type { Knex } from 'knex';
import type { NewEvent } from './types.ts';

/**
 * What the outbox needs to write each event's deliveries in the event's own transaction:
 * who receives each event, and the writing of their deliveries once the events have ids.
 * The webhook fan-out (src/webhooks/fanout.ts) is the one implementation; the outbox
 * knows it only through this shape, so it stands on the bottom layer alone.
 */
export interface EventFanOut<Receiver> {
  /** The receivers of each event, in the caller's transaction: one list per event, in order; empty when nobody hears it. */
  receiversOf(trx: Knex | Knex.Transaction, events: NewEvent[]): Promise<Receiver[][]>;
  /** Writes the deliveries of the events just written (their ids, in order) to the receivers found for them; returns how many. */
  writeDeliveries(trx: Knex | Knex.Transaction, events: NewEvent[], receivers: Receiver[][], eventIds: number[]): Promise<number>;
}

let registered: EventFanOut<unknown> | undefined;

/**
 * Registers the fan-out the outbox writes deliveries through; the composition root calls
 * it at start-up (startServer, the CLI). One implementation per process: registering the
 * same one again does nothing, and another one is refused, so no caller can swap it.
 */
export function useFanOut<Receiver>(fanOut: EventFanOut<Receiver>): void {
  if (registered !== undefined && registered !== fanOut) throw new Error('Another event fan-out is registered already: the outbox has one per process');
  // Sound: the outbox only hands receiversOf's lists back to the same fan-out's writeDeliveries.
  registered = fanOut as EventFanOut<unknown>;
}

/** The registered fan-out; throws when none is, so no event is ever written without its deliveries. */
export function registeredFanOut(): EventFanOut<unknown> {
  if (registered === undefined)
    throw new Error(
      'No event fan-out is registered, so events cannot be recorded with their deliveries: call useFanOut(webhookFanOut) ' +
        '(src/events/fanOut.ts, src/webhooks/fanout.ts) at start-up, as startServer and the CLI do; a test or bench that records events ' +
        'without starting a server in its process calls useWebhookFanOut() (test/helpers/fanOut.ts)',
    );
  return registered;
}
