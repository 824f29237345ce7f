// Webhook operations wake the dispatcher themselves once they commit, whichever surface
// calls them: a route, a page or the CLI that forgot to would leave the work waiting for
// the dispatcher's next look (up to 2 s). Counted on the process's signals, with no
// worker running (nothing else emits).
import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { buildWebhook } from '../delivery/build.ts';
import { SIGNAL } from '../../src/services.ts';
import { findWebhook, updateWebhook } from '../../src/webhooks/store.ts';
import { sendPing } from '../../src/webhooks/ping.ts';
import { redeliver, redeliverFailed } from '../../src/webhooks/history.ts';
import { findDelivery } from '../../src/webhooks/deliveries.ts';
import { deleteRepository } from '../../src/domain/repos.ts';

t.test(
  'creating a repository or webhook, a ping, a redelivery, a bulk redelivery, a resume that releases held deliveries and deleting a repository each wake the dispatcher once; what makes nothing wakes nothing',
  async (t) => {
    const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' }, workers: [] });
    const services = w.running.services;
    const { db } = services;
    let wakes = 0;
    services.signals.on(SIGNAL.deliveries, () => wakes++);
    const woken = () => {
      const n = wakes;
      wakes = 0;
      return n;
    };
    const repo = await buildRepo(w, 'acme', 'app');
    const rx = await startReceiver(t);
    t.equal(woken(), 1, 'creating a repository (its `repository` event) wakes it');

    const hook = await buildWebhook(w, repo, rx);
    t.equal(woken(), 1, 'creating an active webhook (its ping) wakes it');
    await buildWebhook(w, repo, rx, { url: `${rx.url}/quiet`, active: false });
    t.equal(woken(), 0, 'an inactive one makes no ping and wakes nothing');

    const webhook = (await findWebhook(db, hook.id))!;
    await sendPing(services, { ...repo, id: repo.id }, null, webhook);
    t.equal(woken(), 1, 'a ping');

    const [first] = await db('deliveries').where('webhook_id', hook.id).orderBy('id').pluck('id');
    t.equal(await redeliver(services, (await findDelivery(db, hook.id, Number(first)))!), 'pending');
    t.equal(woken(), 0, 'a redelivery refused (still pending) wakes nothing');
    await db('deliveries').where('id', first).update({ status: 'failed', finished_at: Date.now(), next_attempt_at: null });
    await redeliver(services, (await findDelivery(db, hook.id, Number(first)))!);
    t.equal(woken(), 1, 'a redelivery');

    t.same(await redeliverFailed(services, hook.id, { since: Date.now() + 60_000, until: Date.now() + 120_000 }), { redelivered: 0, remaining: 0 });
    t.equal(woken(), 0, 'a bulk redelivery that finds nothing');
    // The ping sent above, failed: the one failed delivery not yet redelivered.
    const [, second] = await db('deliveries').where('webhook_id', hook.id).orderBy('id').pluck('id');
    await db('deliveries').where('id', second).update({ status: 'failed', finished_at: Date.now(), next_attempt_at: null });
    t.equal((await redeliverFailed(services, hook.id, { since: 0, until: Date.now() + 60_000 })).redelivered, 1);
    t.equal(woken(), 1, 'a bulk redelivery');

    // Disabled by Wharf (a 410) with a delivery held: PATCH active: true releases it.
    await db('webhooks').where('id', hook.id).update({ active: false, health_state: 'disabled', health_since: Date.now(), health_reason: '410 Gone' });
    await db('deliveries').where('webhook_id', hook.id).where('status', 'pending').update({ next_attempt_at: null });
    await updateWebhook(services, hook.id, { active: true });
    t.equal(woken(), 1, 'a resume that releases held deliveries');
    await updateWebhook(services, hook.id, { active: true });
    t.equal(woken(), 0, 'a resume with nothing held');
    await deleteRepository(services, repo, null);
    t.equal(woken(), 1, 'deleting a repository');
  },
);
