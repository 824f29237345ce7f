import t from 'tap';
import { connect } from '../../src/db/connect.ts';
import { createTestDatabase } from '../helpers/database.ts';

t.test('making event payloads optional keeps every event, delivery and attempt already stored', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = connect(database.url);
  t.teardown(() => db.destroy());
  // Migrate up to just before the change, as an existing installation is.
  const [, pending] = await db.migrate.list();
  for (const m of pending) {
    if ((m.file ?? m.name ?? m).toString().startsWith('20261124070000')) break;
    await db.migrate.up();
  }
  const now = Date.now();
  const [org] = await db('orgs').insert({ name: 'acme', created_at: now }).returning('id');
  const [repo] = await db('repositories')
    .insert({ org_id: org.id ?? org, name: 'app', created_at: now, updated_at: now })
    .returning('id');
  const [hook] = await db('webhooks')
    .insert({ repository_id: repo.id ?? repo, url: 'http://127.0.0.1:9/', secret: 's', events: '["*"]', created_at: now, updated_at: now })
    .returning('id');
  const [event] = await db('events')
    .insert({ repository_id: repo.id ?? repo, type: 'push', payload: '{"event":"push"}', created_at: now })
    .returning('id');
  const [delivery] = await db('deliveries')
    .insert({ webhook_id: hook.id ?? hook, event_id: event.id ?? event, guid: '00000000-0000-4000-8000-000000000001', event: 'push', created_at: now })
    .returning('id');
  await db('delivery_attempts').insert({ delivery_id: delivery.id ?? delivery, attempt: 1, started_at: now, duration_ms: 1, request_headers: '{}' });

  await db.migrate.latest();
  t.equal((await db('events').first('payload')).payload, '{"event":"push"}', 'the event and its payload are kept');
  t.equal(Number((await db('deliveries').count({ n: '*' }))[0].n), 1, 'its delivery is kept (no cascade from the rebuild)');
  t.equal(Number((await db('delivery_attempts').count({ n: '*' }))[0].n), 1, 'and its attempt');
  await db('events').insert({ repository_id: repo.id ?? repo, type: 'push', payload: null, created_at: now });
  t.equal(Number((await db('events').whereNull('payload').count({ n: '*' }))[0].n), 1, 'an event without a payload can be stored');
  await db('events')
    .where('id', event.id ?? event)
    .delete();
  t.equal(Number((await db('deliveries').count({ n: '*' }))[0].n), 0, 'deleting an event still takes its deliveries (the reference survived)');
});
