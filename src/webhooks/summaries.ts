import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import { DELIVERY_COLUMNS, toDelivery, whereFilter, type Delivery, type DeliveryFilter } from './deliveries.ts';
import type { DeliveryStatus } from './model.ts';

/** A delivery with what it was about: its event's ref (push) and one telling field of the payload (other types). */
export interface DeliverySummary extends Delivery {
  /** The pushed ref (`refs/heads/main`, `refs/tags/v1.2`); null for other events, pings and pruned events. */
  ref: string | null;
  /** The issue or pull request number, release tag, pipeline or agent name, repository name; null when none. */
  subject: string | null;
}

/**
 * The payload field that says what an event of each type was about. Push is absent on
 * purpose: its ref has a column of its own, and a push payload can be megabytes.
 */
const SUBJECT_PATHS: Record<string, string[]> = {
  issue: ['issue', 'number'],
  pull_request: ['number'],
  comment: ['issue', 'number'],
  release: ['release', 'tag_name'],
  pipeline: ['pipeline', 'name'],
  agent: ['agent', 'name'],
  repository: ['repository', 'full_name'],
  import: ['repository', 'full_name'],
};

/**
 * `CASE d.event WHEN … END`: the subject read by the database from the stored payload,
 * only for the types above, so push payloads are never parsed. Payloads are always valid
 * JSON (payloadCap.ts cuts strings, never the text), so neither reader can fail on one.
 */
function subjectSql(db: Db): string {
  const pick = isPostgres(db)
    ? (path: string[]) => `(e.payload::json #>> '{${path.join(',')}}')`
    : (path: string[]) => `CAST(json_extract(e.payload, '$.${path.join('.')}') AS TEXT)`;
  return `CASE d.event ${Object.entries(SUBJECT_PATHS)
    .map(([event, path]) => `WHEN '${event}' THEN ${pick(path)}`)
    .join(' ')} END`;
}

interface SummaryRow {
  ref: string | null;
  subject: string | number | null;
}

/**
 * One page of a webhook's deliveries, newest first, each with what it was about, in one
 * query (the events joined for their ref and one payload field). `before` is the id the
 * previous page ended at; `next` is set when more deliveries follow.
 */
export async function listDeliverySummaries(
  db: Db,
  webhookId: number,
  options: { status?: DeliveryFilter; limit: number; before?: number },
): Promise<{ deliveries: DeliverySummary[]; next: number | null }> {
  const q = db('deliveries as d')
    .leftJoin('events as e', 'e.id', 'd.event_id')
    .where('d.webhook_id', webhookId)
    .orderBy('d.id', 'desc')
    .limit(options.limit + 1)
    .select(DELIVERY_COLUMNS.map((c) => `d.${c}`))
    .select('e.ref', db.raw(`${subjectSql(db)} AS subject`));
  if (options.status) whereFilter(q, options.status, 'd.');
  if (options.before !== undefined) q.where('d.id', '<', options.before);
  const rows = (await q).map(toSummary);
  const more = rows.length > options.limit;
  const page = rows.slice(0, options.limit);
  return { deliveries: page, next: more ? page[page.length - 1].id : null };
}

/** One delivery of a webhook with its summary, or undefined (a delivery of another webhook is not found). */
export async function findDeliverySummary(db: Db, webhookId: number, id: number): Promise<DeliverySummary | undefined> {
  const row = await db('deliveries as d')
    .leftJoin('events as e', 'e.id', 'd.event_id')
    .where({ 'd.id': id, 'd.webhook_id': webhookId })
    .first([...DELIVERY_COLUMNS.map((c) => `d.${c}`), 'e.ref', db.raw(`${subjectSql(db)} AS subject`)]);
  return row ? toSummary(row) : undefined;
}

function toSummary(row: Parameters<typeof toDelivery>[0] & SummaryRow): DeliverySummary {
  return { ...toDelivery(row), ref: row.ref ?? null, subject: row.subject === null || row.subject === undefined ? null : String(row.subject) };
}

/** A webhook's deliveries by state: pending split into held (its webhook paused, SPEC §5.5), retrying (an attempt made) and queued (none yet). */
export interface DeliveryStateCounts {
  total: number;
  successful: number;
  failed: number;
  held: number;
  retrying: number;
  queued: number;
}

/** Counts a webhook's deliveries by state, in one grouped query. */
export async function countDeliveryStates(db: Db, webhookId: number): Promise<DeliveryStateCounts> {
  // 2: held (pending with no next attempt), 1: an attempt made, 0: none yet.
  const tried = 'CASE WHEN next_attempt_at IS NULL THEN 2 WHEN attempts > 0 THEN 1 ELSE 0 END';
  const rows: { status: DeliveryStatus; tried: DbInt; n: DbInt }[] = await db('deliveries')
    .where('webhook_id', webhookId)
    .groupBy('status')
    .groupByRaw(tried)
    .select('status', db.raw(`${tried} AS tried`))
    .count({ n: '*' });
  const counts: DeliveryStateCounts = { total: 0, successful: 0, failed: 0, held: 0, retrying: 0, queued: 0 };
  for (const row of rows) {
    const n = Number(row.n);
    counts.total += n;
    if (row.status === 'success') counts.successful += n;
    else if (row.status === 'failed') counts.failed += n;
    else if (Number(row.tried) === 2) counts.held += n;
    else if (Number(row.tried) === 1) counts.retrying += n;
    else counts.queued += n;
  }
  return counts;
}
