import type { Knex } from 'knex';
import { notifyDeliveries, type Services } from '../services.ts';
import { recordEvents } from '../events/outbox.ts';
import type { NewEvent } from '../events/types.ts';

/** Collects the events a domain change raises, to be written in its transaction. */
export type Raise = (...events: NewEvent[]) => void;

/**
 * Runs a domain change and writes the events it raises in the same transaction
 * (the outbox), so an event exists exactly when its change does; the dispatcher
 * is woken only after the commit, when the deliveries are visible to it.
 */
export async function withEvents<T>(services: Services, work: (trx: Knex.Transaction, raise: Raise) => Promise<T>): Promise<T> {
  const events: NewEvent[] = [];
  const result = await services.db.transaction(async (trx) => {
    const value = await work(trx, (...more) => events.push(...more));
    if (events.length > 0) await recordEvents(trx, events);
    return value;
  });
  if (events.length > 0) notifyDeliveries(services);
  return result;
}
