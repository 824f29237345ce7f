import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { NewEvent } from './types.ts';
import { MAX_PAYLOAD_BYTES, serializePayload } from './payloadCap.ts';
import { registeredFanOut } from './fanOut.ts';
import { insertedId } from '../db/results.ts';

/** At most this many events go in one INSERT. */
const BATCH_ROWS = 500;
/** An INSERT is sent once its payloads reach this many bytes, so no statement carries a giant batch. */
const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Writes events to the outbox in the caller's transaction (or connection), and with
 * them one delivery per matching active webhook, through the registered fan-out
 * (fanOut.ts), in the same transaction: an event and its deliveries commit together or
 * not at all. The payload bytes are fixed here: every delivery of an event sends exactly
 * these bytes. An event no webhook receives is kept without its payload (nothing would
 * ever read it); a payload over `maxPayloadBytes` (MAX_PAYLOAD_BYTES unless a test passes
 * a smaller cap) is cut to fit (payloadCap.ts). Returns the new event ids, in order.
 * Throws, writing nothing, when no fan-out is registered.
 *
 * After the transaction commits, call wake().deliveries() so the dispatcher sends at once.
 */
export async function recordEvents(db: Knex | Knex.Transaction, events: NewEvent[], options: { maxPayloadBytes?: number } = {}): Promise<number[]> {
  const fanOut = registeredFanOut();
  // Events and their deliveries must commit together: open a transaction if the caller has none.
  if (!(db as Knex.Transaction).isTransaction) return db.transaction((trx) => recordEvents(trx, events, options));
  const maxBytes = options.maxPayloadBytes ?? MAX_PAYLOAD_BYTES;
  const receivers = await fanOut.receiversOf(db, events);
  const ids: number[] = [];
  const now = Date.now();
  let rows: Record<string, unknown>[] = [];
  let bytes = 0;
  const flush = async () => {
    const inserted = await db('events').insert(rows).returning('id');
    for (const row of inserted) ids.push(insertedId(row));
    rows = [];
    bytes = 0;
  };
  for (const [i, e] of events.entries()) {
    // Serialized one at a time, between turns of the event loop, and only when some webhook will send it.
    const payload = receivers[i].length > 0 ? serializePayload(e.type, e.payload, maxBytes) : null;
    if (payload !== null && payload.length > 65_536) await nextTurn();
    rows.push({
      repository_id: e.repositoryId,
      ...(e.orgId === undefined ? {} : { org_id: e.orgId }),
      type: e.type,
      action: e.action ?? null,
      ref: e.ref ?? null,
      sender_id: e.senderId,
      payload,
      created_at: now,
    });
    bytes += payload?.length ?? 0;
    if (rows.length >= BATCH_ROWS || bytes >= BATCH_BYTES) await flush();
  }
  if (rows.length > 0) await flush();
  await fanOut.writeDeliveries(db, events, receivers, ids);
  return ids;
}

/**
 * Writes an organization's own events (`repository`, `import`: SPEC §5.4, organization
 * webhooks only) in the caller's transaction, as recordEvents does, but only those some
 * webhook receives: an event of this kind that nobody hears leaves no row at all (no
 * repository history is made of them). Returns how many were written.
 */
export async function recordOrgEvents(db: Knex.Transaction, events: NewEvent[]): Promise<number> {
  const receivers = await registeredFanOut().receiversOf(db, events);
  const heard = events.filter((_, i) => receivers[i].length > 0);
  if (heard.length > 0) await recordEvents(db, heard);
  return heard.length;
}
