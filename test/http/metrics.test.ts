// /metrics is prom-client's text: every family of SPEC §10 under its name, plus the
// default process and Node.js metrics, and two servers in one process keep their counts apart.
import t from 'tap';
import { startWharf } from '../helpers/wharf.ts';

const families = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]),
  );

t.test('/metrics carries the SPEC §10 families and the process and Node.js metrics', async (t) => {
  const w = await startWharf(t);
  await w.api('GET', '/api/v1/user');
  const res = await fetch(`${w.url}/metrics`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/, 'Prometheus text format');
  const text = await res.text();
  const names = families(text);
  for (const name of [
    'wharf_deliveries',
    'wharf_delivery_queue_depth',
    'wharf_delivery_in_flight',
    'wharf_delivery_attempts_total',
    'wharf_delivery_attempt_seconds',
    'wharf_imports',
    'wharf_parked',
    'wharf_push_records',
    'wharf_push_record_failures_total',
    'wharf_pushes_recorded_total',
    'wharf_http_requests_total',
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
  ]) {
    t.ok(names.has(name), `${name} is there`);
  }
  t.match(text, /^wharf_http_requests_total\{method="GET",route="\/api\/v1\/user",status="200"\} 1$/m, 'the API request is counted by its route');
  t.match(text, /^wharf_delivery_attempts_total\{outcome="error"\} 0$/m, 'outcomes show at zero before any attempt');
});

t.test('two servers in one process keep their own counts', async (t) => {
  const a = await startWharf(t);
  const b = await startWharf(t);
  for (let i = 0; i < 3; i++) await a.api('GET', '/api/v1/user');
  const count = async (url: string) => /route="\/api\/v1\/user",status="200"\} (\d+)/.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? '0';
  t.equal(await count(a.url), '3');
  t.equal(await count(b.url), '0');
});
