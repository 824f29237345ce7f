import type { Knex } from 'knex';
import { type Services, wake } from '../services.ts';
import { recordEvents } from '../events/outbox.ts';
import type { NewEvent } from '../events/types.ts';
import { markPushMirrorsDue } from './pushMirrorsDue.ts';

/** Collects the events a domain change raises, to be written in its transaction. */
export type Raise = (...events: NewEvent[]) => void;

/**
 * Runs a domain change and writes the events it raises in the same transaction
 * (the outbox), so an event exists exactly when its change does; the dispatcher
 * is woken only after the commit, when the deliveries are visible to it. A change that
 * moves a branch or tag (a merge, a release's new tag: it raises a `push`) makes the
 * repository's `sync_on_push` push mirrors due in the same transaction, as a recorded
 * `git push` does (src/pushes/recorder.ts).
 */
export async function withEvents<T>(services: Services, work: (trx: Knex.Transaction, raise: Raise) => Promise<T>): Promise<T> {
  const events: NewEvent[] = [];
  let mirrorsDue = 0;
  const result = await services.db.transaction(async (trx) => {
    const value = await work(trx, (...more) => events.push(...more));
    if (events.length > 0) await recordEvents(trx, events);
    for (const repositoryId of new Set(events.flatMap((e) => (e.type === 'push' && e.repositoryId !== null ? [e.repositoryId] : []))))
      mirrorsDue += await markPushMirrorsDue(trx, repositoryId);
    return value;
  });
  if (events.length > 0) wake(services).deliveries();
  if (mirrorsDue > 0) wake(services).pushMirrors();
  return result;
}
