import type Koa from 'koa';
import type { Context, Next } from 'koa';
import type { Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import { toHttpError } from '../http/onerror.ts';
import { deliveryMetrics, LATENCY_BUCKETS } from '../delivery/metrics.ts';
import { pushMetrics } from '../git/pushMetrics.ts';
import { pendingPushRecords } from '../git/pushRecords.ts';
import { parkedImportsMetric } from '../import/parked.ts';
import { parkedDeliveries } from '../delivery/parked.ts';
import { parkedPushRecordsSample } from '../git/pushParking.ts';

const requestCounts = new WeakMap<object, Map<string, number>>();

function countsOf(services: Services): Map<string, number> {
  let m = requestCounts.get(services);
  if (!m) requestCounts.set(services, (m = new Map()));
  return m;
}

const label = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Counts every request by matched route pattern (never the raw path, which would make
 * one series per id) and final status, including errors rendered further out.
 */
export function httpMetrics(services: Services) {
  const counts = countsOf(services);
  return async function countRequest(ctx: Context, next: Next) {
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      status = toHttpError(err).status;
      throw err;
    } finally {
      const route = (ctx as any)._matchedRoute ?? (status === 404 ? 'unmatched' : 'other');
      const key = `method="${ctx.method}",route="${label(String(route))}",status="${status}"`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  };
}

async function groupCounts(db: Db, table: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const row of (await db(table).groupBy('status').select('status').count({ n: '*' })) as any[]) out.set(String(row.status), Number(row.n));
  return out;
}

/** The Prometheus text of SPEC §10. Delivery and import counts come from the database, so they hold across processes. */
export async function renderMetrics(services: Services): Promise<string> {
  const { db } = services;
  const lines: string[] = [];
  const deliveries = await groupCounts(db, 'deliveries');
  lines.push('# HELP wharf_deliveries Webhook deliveries kept, by result.', '# TYPE wharf_deliveries gauge');
  for (const result of ['success', 'failed', 'pending']) lines.push(`wharf_deliveries{result="${result}"} ${deliveries.get(result) ?? 0}`);
  const [{ due }] = (await db('deliveries').where('status', 'pending').where('next_attempt_at', '<=', Date.now()).count({ due: '*' })) as any[];
  lines.push('# HELP wharf_delivery_queue_depth Pending deliveries due now (waiting or in flight).', '# TYPE wharf_delivery_queue_depth gauge', `wharf_delivery_queue_depth ${Number(due)}`);
  const m = deliveryMetrics(services);
  lines.push('# HELP wharf_delivery_in_flight Attempts in flight in this process.', '# TYPE wharf_delivery_in_flight gauge', `wharf_delivery_in_flight ${m.inFlight}`);
  lines.push('# HELP wharf_delivery_attempts_total Delivery attempts made by this process, by outcome.', '# TYPE wharf_delivery_attempts_total counter');
  for (const outcome of ['success', 'failure', 'error']) lines.push(`wharf_delivery_attempts_total{outcome="${outcome}"} ${m.attempts.get(outcome) ?? 0}`);
  lines.push('# HELP wharf_delivery_attempt_seconds Delivery attempt latency.', '# TYPE wharf_delivery_attempt_seconds histogram');
  LATENCY_BUCKETS.forEach((le, i) => lines.push(`wharf_delivery_attempt_seconds_bucket{le="${le}"} ${m.latencyBuckets[i]}`));
  lines.push(`wharf_delivery_attempt_seconds_bucket{le="+Inf"} ${m.latencyCount}`, `wharf_delivery_attempt_seconds_sum ${m.latencySum}`, `wharf_delivery_attempt_seconds_count ${m.latencyCount}`);
  lines.push('# HELP wharf_imports Repository imports, by status.', '# TYPE wharf_imports gauge');
  for (const [status, n] of await groupCounts(db, 'import_jobs')) lines.push(`wharf_imports{status="${label(status)}"} ${n}`);
  lines.push('# HELP wharf_parked Work parked after repeated node deaths or a failure of its own; never retried by itself.', '# TYPE wharf_parked gauge');
  lines.push(await parkedImportsMetric(db));
  lines.push(`wharf_parked{kind="delivery"} ${await parkedDeliveries(db)}`);
  lines.push(await parkedPushRecordsSample(db));
  const pending = await pendingPushRecords(db);
  lines.push('# HELP wharf_push_records Pushes whose events are not recorded yet, by state (failing: failed at least once; parked: never tried again by itself).', '# TYPE wharf_push_records gauge');
  for (const state of ['waiting', 'failing', 'parked'] as const) lines.push(`wharf_push_records{state="${state}"} ${pending[state]}`);
  const pm = pushMetrics(services);
  lines.push('# HELP wharf_push_record_failures_total Failed attempts at recording a push, by this process (each is retried).', '# TYPE wharf_push_record_failures_total counter', `wharf_push_record_failures_total ${pm.failures}`);
  lines.push('# HELP wharf_pushes_recorded_total Pushes whose events this process recorded.', '# TYPE wharf_pushes_recorded_total counter', `wharf_pushes_recorded_total ${pm.recorded}`);
  lines.push('# HELP wharf_http_requests_total HTTP requests served by this process, by route and status.', '# TYPE wharf_http_requests_total counter');
  for (const [key, n] of countsOf(services)) lines.push(`wharf_http_requests_total{${key}} ${n}`);
  return `${lines.join('\n')}\n`;
}

/** GET /metrics, beside the API and outside it: open, as Prometheus scrapers expect, and it carries only counts. */
export function metricsMount(app: Koa, services: Services) {
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    (ctx as any)._matchedRoute = '/metrics';
    ctx.type = 'text/plain; version=0.0.4; charset=utf-8';
    ctx.body = await renderMetrics(services);
  });
}
