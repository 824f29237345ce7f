import type Koa from 'koa';
import { Gauge, type Registry } from 'prom-client';
import type { Services } from '../services.ts';
import { countBy, countRows } from '../db/rows.ts';
import { familyOf, metricsRegistry } from '../metrics/registry.ts';
import { deliveryMetrics } from '../delivery/attempt/metrics.ts';
import { pushMetrics } from '../pushes/metrics.ts';
import { pendingPushRecords } from '../pushes/records.ts';
import { parkedPushRecords } from '../pushes/parking.ts';
import { parkedImports } from '../import/parked.ts';
import { parkedDeliveries } from '../delivery/store/parked.ts';
import { parkedPushMirrors } from '../pushMirrors/claim.ts';
import { HEALTH_STATES } from '../webhooks/model.ts';

/** A gauge whose samples are read from the database at each scrape, so they hold across processes. */
function databaseGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: L[],
  read: (set: (labels: Partial<Record<L, string>>, n: number) => void) => Promise<void>,
) {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await read((labels, n) => (labelNames.length ? this.set(labels, n) : this.set(n)));
    },
  });
}

/** Registers the families of SPEC §10 that are read from the database (deliveries, imports, push records, parked work). */
function databaseFamilies(services: Services): void {
  const { db } = services;
  familyOf(services, 'database', (registry) => {
    databaseGauge(registry, 'wharf_deliveries', 'Webhook deliveries kept, by result.', ['result'], async (set) => {
      const counts = await countBy(db('deliveries'), 'status');
      for (const result of ['success', 'failed', 'pending']) set({ result }, counts.get(result) ?? 0);
    });
    databaseGauge(registry, 'wharf_delivery_queue_depth', 'Pending deliveries due now (waiting or in flight).', [], async (set) => {
      set({}, await countRows(db('deliveries').where('status', 'pending').where('next_attempt_at', '<=', Date.now())));
    });
    databaseGauge(registry, 'wharf_webhook_health', 'Webhooks by endpoint health (SPEC §5.5).', ['state'], async (set) => {
      const counts = await countBy(db('webhooks'), 'health_state');
      for (const state of HEALTH_STATES) set({ state }, counts.get(state) ?? 0);
    });
    databaseGauge(registry, 'wharf_webhook_held_deliveries', 'Deliveries held while their webhook is paused or disabled.', [], async (set) => {
      set({}, await countRows(db('deliveries').where('status', 'pending').whereNull('next_attempt_at')));
    });
    databaseGauge(registry, 'wharf_imports', 'Repository imports, by status.', ['status'], async (set) => {
      for (const [status, n] of await countBy(db('import_jobs'), 'status')) set({ status }, n);
    });
    databaseGauge(
      registry,
      'wharf_parked',
      'Work parked after repeated node deaths or a failure of its own; never retried by itself.',
      ['kind'],
      async (set) => {
        set({ kind: 'import' }, await parkedImports(db));
        set({ kind: 'delivery' }, await parkedDeliveries(db));
        set({ kind: 'push_record' }, await parkedPushRecords(db));
        set({ kind: 'push_mirror' }, await parkedPushMirrors(db));
      },
    );
    databaseGauge(
      registry,
      'wharf_push_records',
      'Pushes whose events are not recorded yet, by state (failing: failed at least once; parked: never tried again by itself).',
      ['state'],
      async (set) => {
        const pending = await pendingPushRecords(db);
        for (const state of ['waiting', 'failing', 'parked'] as const) set({ state }, pending[state]);
      },
    );
    return true;
  });
}

/** The Prometheus text of SPEC §10 (prom-client), the default process and Node.js metrics included. */
export async function renderMetrics(services: Services): Promise<string> {
  databaseFamilies(services);
  // Made here too, so their families show (at zero) before the first attempt or push.
  deliveryMetrics(services);
  pushMetrics(services);
  return metricsRegistry(services).metrics();
}

/** GET /metrics, beside the API and outside it: open, as Prometheus scrapers expect, and it carries only counts. */
export function metricsMount(app: Koa, services: Services) {
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    ctx._matchedRoute = '/metrics';
    ctx.type = metricsRegistry(services).contentType;
    ctx.body = await renderMetrics(services);
  });
}
