import t from 'tap';
import { connect } from '../../src/db/connect.ts';
import { open } from '../../src/secrets/cipher.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { installation, serveOn } from './helpers.ts';

const MIGRATION = '20261124060000_sealed_secrets.ts';

t.test('secrets stored in plaintext before sealing existed are sealed at the next start and still sign deliveries', async (t) => {
  const env = await installation(t);
  const rx = await startReceiver(t);
  // The database as the previous release left it: every migration before this one, plaintext rows.
  const db = connect(env.DATABASE_URL);
  for (;;) {
    const [, pending] = await db.migrate.list();
    if (pending.length === 0 || pending[0].file === MIGRATION) break;
    await db.migrate.up();
  }
  // Rows written as that release wrote them: today's domain functions expect today's schema.
  const now = Date.now();
  const [orgRow] = await db('orgs').insert({ name: 'acme', created_at: now }).returning('id');
  const org = { id: Number(typeof orgRow === 'object' ? orgRow.id : orgRow) };
  const [repoRow] = await db('repositories').insert({ org_id: org.id, name: 'app', created_at: now, updated_at: now }).returning('id');
  const repo = { id: Number(typeof repoRow === 'object' ? repoRow.id : repoRow) };
  const [hook] = await db('webhooks')
    .insert({
      repository_id: repo.id,
      url: `${rx.url}/hook`,
      content_type: 'json',
      secret: 'legacy plaintext secret',
      events: JSON.stringify(['push']),
      active: true,
      created_at: now,
      updated_at: now,
    })
    .returning('id');
  const hookId = Number(typeof hook === 'object' ? hook.id : hook);
  // Parked far in the future, so no runner takes it while we look.
  await db('import_jobs').insert({
    status: 'queued',
    source_url: 'http://127.0.0.1:9/x.git',
    credentials: JSON.stringify({ username: 'sam', password: 'legacy-password' }),
    target_org_id: org.id,
    name: 'later',
    visibility: 'private',
    run_after: 8_000_000_000_000,
    created_at: now,
    updated_at: now,
  });
  await db.destroy();

  const w = await serveOn(t, env);
  const key = w.running.services.config.secretKey!;
  const stored = await w.running.services.db('webhooks').where('id', hookId).first();
  t.match(stored.secret, /^v1:[0-9a-f]{8}:/, 'the webhook secret is sealed');
  t.equal(open(key, 'webhooks.secret', stored.secret), 'legacy plaintext secret');
  const job = await w.running.services.db('import_jobs').where('name', 'later').first();
  t.match(job.credentials, /^v1:[0-9a-f]{8}:/, 'the import credentials are sealed');
  t.same(JSON.parse(open(key, 'import_jobs.credentials', job.credentials)), { username: 'sam', password: 'legacy-password' });

  rx.secrets.set(hookId, 'legacy plaintext secret');
  t.equal((await w.api('POST', `/api/v1/webhooks/${hookId}/ping`)).status, 202);
  await waitFor(() => rx.received.length === 1, { what: 'the ping' });
  t.ok(rx.received[0].signatureOk, 'signed with the secret as it was stored before');
});
