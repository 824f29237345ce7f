import path from 'node:path';
import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { runCli } from '../helpers/cli.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { buildWebhook, raise } from '../delivery/build.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';

t.test('wharf webhook redeliver: in process on the database, no token; the running server sends them; exit codes', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_RETRY_SCHEDULE: '0s' } });
  const db = w.running.services.db;
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t, () => ({ status: 503 }));
  const hook = await buildWebhook(w, repo, rx, { events: ['push'] });
  await raise(w, repo, [{ n: 2 }]);
  const failed = await deliveriesSettled(db, { webhookId: hook.id, count: 3 });
  t.ok(
    failed.every((d) => d.status === 'failed'),
    'the ping and two pushes failed',
  );
  rx.answer(() => ({ status: 200 }));

  const env = { DATABASE_URL: w.database.url, DATA_DIR: path.join(w.dir, 'data'), REPOS_DIR: path.join(w.dir, 'repos'), LOG_LEVEL: 'silent' };
  const cli = (...args: string[]) => runCli(['webhook', 'redeliver', ...args], env);
  const first = await cli(String(hook.id), '--since', '1h');
  t.same([first.code, first.stdout, first.stderr], [0, 'redelivered 3, remaining 0\n', '']);
  await waitFor(() => rx.received.filter((r) => r.headers['x-service-delivery-attempt'] === '1').length === 6, { what: 'the three sent again' });
  t.same(
    rx.received
      .slice(3)
      .map((r) => r.guid)
      .sort(),
    failed.map((d) => d.guid).sort(),
    'same guids',
  );
  const again = await cli(String(hook.id), '--since', new Date(Date.now() - 3_600_000).toISOString(), '--until', '0s');
  t.same([again.code, again.stdout], [0, 'redelivered 0, remaining 0\n'], 'a second run redelivers nothing');

  t.equal((await cli(String(hook.id))).code, 2, '--since is required');
  t.equal((await cli(String(hook.id), '--since', 'yesterday')).code, 2, 'an unreadable time');
  const reversed = await cli(String(hook.id), '--since', '1h', '--until', '2h');
  t.same([reversed.code, reversed.stderr], [2, 'wharf: until: must not be before since\n'], 'since after until');
  t.equal((await cli('x1', '--since', '1h')).code, 2, 'a bad id');
  const missing = await cli('999999', '--since', '1h');
  t.same([missing.code, missing.stderr], [1, 'wharf: no webhook with id 999999\n']);
});
