import t from 'tap';
import { startWharf, buildRepo } from '../helpers/wharf.ts';
import { postgresUrl } from '../helpers/database.ts';
import { startReceiver } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook, raise } from './build.ts';
import { startSibling } from './servers.ts';

t.test(
  'two processes on one Postgres never attempt the same delivery at once',
  { skip: postgresUrl ? false : 'needs TEST_DATABASE_URL (Postgres)' },
  async (t) => {
    const env = { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_CONCURRENCY: '8' };
    const w = await startWharf(t, { env });
    const other = await startSibling(t, w, env);
    const repo = await buildRepo(w, 'acme', 'app');
    const inFlight = new Set<string>();
    let overlaps = 0;
    const rx = await startReceiver(t, (r) => {
      if (inFlight.has(r.guid)) overlaps++;
      inFlight.add(r.guid);
      setTimeout(() => inFlight.delete(r.guid), 15);
      return { status: 200, delayMs: 15 };
    });
    const hook = await buildWebhook(w, repo, rx, { events: ['*'] });
    // Events recorded in the first process only: the second learns of them through LISTEN/NOTIFY.
    for (let i = 0; i < 6; i++) await raise(w, repo, [{ type: 'issue', n: 50 }]);
    await waitFor(
      async () => {
        const [{ n }] = await w.running.services.db('deliveries').where({ webhook_id: hook.id, status: 'success' }).count({ n: '*' });
        return Number(n) === 301;
      },
      { what: 'all 301 deliveries to succeed', timeoutMs: 60_000 },
    );
    t.equal(overlaps, 0, 'no delivery was in flight twice at once');
    const perGuid = new Map<string, number>();
    for (const r of rx.received) perGuid.set(r.guid, (perGuid.get(r.guid) ?? 0) + 1);
    t.equal(perGuid.size, 301);
    t.ok(
      [...perGuid.values()].every((n) => n === 1),
      'each delivery attempted exactly once (no crash, no failure)',
    );
    const attempts = (logs: string[]) => logs.filter((l) => l.includes('"delivery attempt"')).length;
    const mine = attempts(w.logs);
    const theirs = attempts(other.logs);
    t.equal(mine + theirs, 301);
    t.ok(mine > 0 && theirs > 0, `both processes delivered (${mine} and ${theirs})`);
    await other.stop();
  },
);
