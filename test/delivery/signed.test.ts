import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { allDeliveries, buildWebhook, raise } from './build.ts';

const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback' };

t.test('every delivery is signed: HMAC of the exact bytes, Standard Webhooks headers, same guid per event and webhook', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const generated = await buildWebhook(w, repo, rx, { events: ['*'] });
  t.match(generated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'generated secret in the Standard Webhooks form, shown once');
  const chosen = await buildWebhook(w, repo, rx, { url: `${rx.url}/other`, secret: 'plain old secret ✓', events: ['push'] });
  await waitFor(() => rx.received.filter((r) => r.event === 'ping').length === 2, { what: 'the two creation pings' });
  await raise(w, repo, [{ type: 'push', n: 3 }]);
  await waitFor(() => rx.received.filter((r) => r.event === 'push').length === 6, { what: '3 pushes to each webhook' });
  for (const r of rx.received) {
    t.ok(r.signatureOk, `signature of ${r.event} to hook ${r.hookId} verified`);
    t.equal(r.headers['content-type'], 'application/json');
    t.match(r.headers['user-agent'], /^Wharf-Hookshot\/\d+\.\d+\.\d+/);
    t.equal(r.attempt, 1);
    t.match(r.guid, /^[0-9a-f-]{36}$/);
    if (r.hookId === generated.id) {
      t.equal(r.standardOk, true, 'Standard Webhooks signature verified');
      t.equal(r.headers['webhook-id'], r.guid);
    } else {
      t.equal(r.standardOk, null);
      t.notOk(r.headers['webhook-signature'], 'no Standard Webhooks headers for a plain secret');
    }
  }
  const pushes = rx.received.filter((r) => r.event === 'push');
  t.equal(new Set(pushes.map((r) => r.guid)).size, 6, 'one guid per (event, webhook)');
  const body = JSON.parse(pushes[0].body.toString('utf8'));
  t.equal(body.text, 'ünïcode ✓', 'payload bytes arrive as recorded');
  const ping = JSON.parse(rx.received.find((r) => r.event === 'ping' && r.hookId === chosen.id)!.body.toString());
  t.equal(ping.hook_id, chosen.id);
  t.same(ping.hook.events, ['push']);
  t.equal(ping.repository.full_name, 'acme/app');
  t.ok(ping.zen);

  const list = await waitFor(
    async () => {
      const l = await allDeliveries(w, generated.id);
      return l.counts.successful === 4 ? l : null;
    },
    { what: 'all recorded as successes' },
  );
  t.same(list.counts, { total: 4, successful: 4, failed: 0, pending: 0 }, 'counts match what the receiver saw');
  const received = new Set(rx.received.filter((r) => r.hookId === generated.id).map((r) => r.guid));
  t.same(new Set(list.deliveries.map((d) => d.guid)), received);
  t.ok(
    w.logs.some((l) => l.includes('"delivery attempt"')),
    'attempts are logged',
  );
  t.notOk(
    w.logs.some((l) => l.includes(generated.secret.slice(6)) || l.includes('plain old secret')),
    'no secret in any log line',
  );
});

t.test('event filter, branch filter and inactive webhooks', async (t) => {
  const w = await startWharf(t, { env });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  const pushOnly = await buildWebhook(w, repo, rx, { url: `${rx.url}/push` });
  const issues = await buildWebhook(w, repo, rx, { url: `${rx.url}/issues`, events: ['issue', 'comment'] });
  const release = await buildWebhook(w, repo, rx, { url: `${rx.url}/release`, branch_filter: 'release/*' });
  const inactive = await buildWebhook(w, repo, rx, { url: `${rx.url}/off`, events: ['*'], active: false });
  await waitFor(() => rx.received.length === 3, { what: 'pings to the three active hooks' });
  t.notOk(
    rx.received.some((r) => r.hookId === inactive.id),
    'no creation ping for an inactive webhook',
  );
  await raise(w, repo, [
    { type: 'push', ref: 'refs/heads/main' },
    { type: 'push', ref: 'refs/heads/release/1.0' },
    { type: 'push', ref: 'refs/heads/release/1.0/hotfix' },
    { type: 'push', ref: 'refs/tags/release/2.0' },
    { type: 'issue' },
    { type: 'comment' },
    { type: 'pipeline' },
  ]);
  // 2 pushes to pushOnly... count what each should get, then wait for the total.
  await waitFor(() => rx.received.length === 3 + 4 + 2 + 1, { what: 'the matching deliveries' });
  // Something sent after the burst proves nothing else was still on its way.
  await raise(w, repo, [{ type: 'issue' }]);
  await waitFor(() => rx.received.length === 3 + 4 + 2 + 1 + 1, { what: 'the marker' });
  const got = (id: number) =>
    rx.received.filter((r) => r.hookId === id && r.event !== 'ping').map((r) => `${r.event}:${JSON.parse(r.body.toString()).ref ?? ''}`);
  t.same(
    got(pushOnly.id).sort(),
    ['push:refs/heads/main', 'push:refs/heads/release/1.0', 'push:refs/heads/release/1.0/hotfix', 'push:refs/tags/release/2.0'].sort(),
  );
  t.same(got(issues.id).sort(), ['comment:refs/heads/main', 'issue:refs/heads/main', 'issue:refs/heads/main']);
  t.same(got(release.id), ['push:refs/heads/release/1.0'], 'release/* matches one level; tags do not pass a branch filter');
  t.same(got(inactive.id), [], 'inactive webhook gets nothing');
  t.ok(rx.received.every((r) => r.signatureOk));
});
