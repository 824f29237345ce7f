import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver, type Answer } from './receiver.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { buildWebhook, raise } from './build.ts';

const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s,200ms,400ms,800ms', WEBHOOK_TIMEOUT: '1s' };

/** The delivery detail, once it has finished. */
async function finished(w: any, hookId: number, id: number) {
  return waitFor(
    async () => {
      const res = await w.api('GET', `/api/v1/webhooks/${hookId}/deliveries/${id}`);
      return res.body.status !== 'pending' ? res.body : null;
    },
    { what: `delivery ${id} to finish` },
  );
}

/** The one push delivery of a webhook (ignoring pings). */
async function pushDelivery(w: any, hookId: number) {
  const res = await w.api('GET', `/api/v1/webhooks/${hookId}/deliveries?limit=100`);
  return res.body.deliveries.find((d: any) => d.event === 'push');
}

t.test('a receiver that always fails gets exactly 4 attempts, in order, then the delivery has failed for good', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, (r) => ({ status: r.event === 'ping' ? 200 : 500, body: 'boom' }));
  const hook = await buildWebhook(w, repo, rx);
  await raise(w, repo, [{ type: 'push' }]);
  const d = await finished(w, hook.id, (await waitFor(() => pushDelivery(w, hook.id), { what: 'push delivery' })).id);
  const pushes = rx.received.filter((r) => r.event === 'push');
  t.same(
    pushes.map((r) => r.attempt),
    [1, 2, 3, 4],
    'attempts numbered 1 to 4, in order',
  );
  t.equal(new Set(pushes.map((r) => r.guid)).size, 1, 'the same guid on every attempt');
  t.ok(
    pushes.every((r) => r.signatureOk && r.body.equals(pushes[0].body)),
    'the same signed bytes every time',
  );
  t.match(d, { status: 'failed', result: 'Failed', status_code: 500, attempts: 4, next_attempt_at: null, redelivery: false });
  t.same(
    d.attempts_log.map((a: any) => [a.attempt, a.status_code]),
    [
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
    ],
  );
  t.equal(d.response.status, 500);
  t.equal(d.response.body, 'boom');
  t.equal(d.request.headers['x-service-delivery-attempt'], '4');
  t.equal(d.request.body, pushes[0].body.toString('utf8'), 'the detail shows the exact body');
  for (let i = 1; i < 4; i++) {
    const gap = Date.parse(d.attempts_log[i].timestamp) - Date.parse(d.attempts_log[i - 1].timestamp);
    t.ok(gap >= 200 * 2 ** (i - 1), `gap before attempt ${i + 1} is at least the schedule's ${200 * 2 ** (i - 1)} ms`);
  }
  // Settled: recorded failed, no lease, no next attempt scheduled; nothing sends it again, so the count is final.
  await deliveriesSettled(w.running.services.db, { webhookId: hook.id, event: 'push', count: 1 });
  t.equal(rx.received.filter((r) => r.event === 'push').length, 4, 'no fifth attempt');

  // Manual retry: a new delivery, same guid and bytes, redelivery_of set, and it succeeds.
  rx.answer(() => ({ status: 204 }));
  const retry = await w.api('POST', `/api/v1/webhooks/${hook.id}/deliveries/${d.id}/retry`);
  t.equal(retry.status, 202);
  t.match(retry.body, { guid: d.guid, redelivery: true, redelivery_of: d.id, status: 'pending', event: 'push' });
  t.not(retry.body.id, d.id);
  const again = await finished(w, hook.id, retry.body.id);
  t.match(again, { status: 'success', result: 'Success', status_code: 204, attempts: 1 });
  const last = rx.received[rx.received.length - 1];
  t.equal(last.guid, d.guid, 'the receiver sees the same guid');
  t.ok(last.body.equals(pushes[0].body) && last.signatureOk, 'and the same signed bytes');
});

t.test('success at attempt 3 stops retrying; 3xx, timeouts and refused connections are failures; 410 stops', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  let pushes = 0;
  const rx = await startReceiver(t, (r): Answer => {
    if (r.event === 'ping') return {};
    if (r.path === '/third') return { status: ++pushes < 3 ? 503 : 200 };
    if (r.path === '/redirect') return { status: 302, headers: { location: `http://127.0.0.1:1/` } };
    if (r.path === '/slow') return { delayMs: 1500 };
    if (r.path === '/gone') return { status: 410 };
    return { status: 429, headers: { 'retry-after': '3600' } };
  });
  const third = await buildWebhook(w, repo, rx, { url: `${rx.url}/third` });
  const redirect = await buildWebhook(w, repo, rx, { url: `${rx.url}/redirect` });
  const slow = await buildWebhook(w, repo, rx, { url: `${rx.url}/slow` });
  const gone = await buildWebhook(w, repo, rx, { url: `${rx.url}/gone` });
  const later = await buildWebhook(w, repo, rx, { url: `${rx.url}/later` });
  const refused = await buildWebhook(w, repo, rx, { url: 'http://127.0.0.1:1/nothing-listens', active: false });
  await w.api('PATCH', `/api/v1/repos/acme/app/webhooks/${refused.id}`, { body: { active: true } });
  await raise(w, repo, [{ type: 'push' }]);

  const d3 = await finished(w, third.id, (await waitFor(() => pushDelivery(w, third.id), { what: 'push' })).id);
  t.match(d3, { status: 'success', attempts: 3, status_code: 200 });
  t.same(
    d3.attempts_log.map((a: any) => a.status_code),
    [503, 503, 200],
  );

  const dr = await finished(w, redirect.id, (await pushDelivery(w, redirect.id)).id);
  t.match(dr, { status: 'failed', attempts: 4, status_code: 302 }, 'a redirect is a failure and is never followed');
  t.equal(dr.response.headers.location, 'http://127.0.0.1:1/');

  const ds = await finished(w, slow.id, (await pushDelivery(w, slow.id)).id);
  t.match(ds, { status: 'failed', attempts: 4, status_code: null, error: 'timeout' });
  t.ok(ds.attempts_log.every((a: any) => a.error === 'timeout'));

  const dg = await finished(w, gone.id, (await pushDelivery(w, gone.id)).id);
  t.match(dg, { status: 'failed', attempts: 1, status_code: 410 }, '410 stops at once');

  const dn = await finished(w, refused.id, (await pushDelivery(w, refused.id)).id);
  t.match(dn, { status: 'failed', attempts: 4, error: 'connection refused' });

  const dl = await waitFor(
    async () => {
      const d = await pushDelivery(w, later.id);
      return d.attempts === 1 && d.status_code === 429 ? d : null;
    },
    { what: '429 recorded' },
  );
  t.equal(dl.status, 'pending');
  t.ok(Date.parse(dl.next_attempt_at) - Date.parse(dl.timestamp) >= 3_590_000, 'Retry-After pushes the next attempt an hour later, past the 200 ms schedule');
  t.equal(rx.received.filter((r) => r.path === '/slow' && r.event === 'push').length, 4);

  const list = await w.api('GET', `/api/v1/webhooks/${slow.id}/deliveries?status=failed`);
  t.equal(list.body.deliveries.length, 1);
  t.match(list.body, { total: 2, successful: 1, failed: 1, pending: 0 });
});

t.test('retry is 409 while pending; deleting a webhook cancels its pending deliveries', async (t) => {
  const w = await startWharf(t, { env: { ...env, WEBHOOK_RETRY_SCHEDULE: '0s,300ms,10m' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, (r) => ({ status: r.event === 'ping' ? 200 : 500 }));
  const hook = await buildWebhook(w, repo, rx);
  await raise(w, repo, [{ type: 'push', n: 5 }]);
  await waitFor(() => rx.received.filter((r) => r.event === 'push').length === 10, { what: 'two attempts of each push' });
  const pending = await waitFor(
    async () => {
      const res = await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=pending`);
      return res.body.deliveries.length === 5 && res.body.deliveries.every((d: any) => d.attempts === 2 && d.status_code === 500) ? res.body : null;
    },
    { what: 'retries scheduled' },
  );
  t.equal(pending.pending, 5);
  const conflict = await w.api('POST', `/api/v1/webhooks/${hook.id}/deliveries/${pending.deliveries[0].id}/retry`);
  t.equal(conflict.status, 409);
  t.equal(conflict.body.error.code, 'conflict');
  const del = await w.api('DELETE', `/api/v1/repos/acme/app/webhooks/${hook.id}`);
  t.equal(del.status, 204);
  const gone = await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`);
  t.equal(gone.status, 404);
  const left = await w.running.services.db('deliveries').where('webhook_id', hook.id).count({ n: '*' });
  t.equal(Number(left[0].n), 0, 'no delivery of the deleted webhook remains to be sent');
});

t.test('a response body with NUL bytes is recorded (as U+FFFD) and the delivery succeeds', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, () => ({ status: 200, body: 'ok\0binary\0' }));
  const hook = await buildWebhook(w, repo, rx);
  await raise(w, repo, [{ type: 'push' }]);
  const d = await finished(w, hook.id, (await waitFor(() => pushDelivery(w, hook.id), { what: 'push delivery' })).id);
  t.match(d, { status: 'success', attempts: 1 });
  t.equal(d.response.body, 'ok\uFFFDbinary\uFFFD');
  t.equal(rx.received.filter((r) => r.event === 'push').length, 1, 'sent once: the result was written');
});
