import t from 'tap';
import { connect, migrate } from '../../src/db/connect.ts';
import { recordEvents, recordOrgEvents } from '../../src/events/outbox.ts';
import { useFanOut } from '../../src/events/fanOut.ts';
import { webhookFanOut } from '../../src/webhooks/fanout.ts';
import type { NewEvent } from '../../src/events/types.ts';
import { createTestDatabase } from '../helpers/database.ts';

// This file starts no server: the fan-out is registered only where a test says so.

t.test('the outbox refuses to record events before a fan-out is registered, then records them with their deliveries', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = connect(database.url);
  t.teardown(() => db.destroy());
  await migrate(db);
  const now = Date.now();
  const [org] = await db('orgs').insert({ name: 'acme', created_at: now }).returning('id');
  const [repo] = await db('repositories')
    .insert({ org_id: org.id ?? org, name: 'app', created_at: now, updated_at: now })
    .returning('id');
  await db('webhooks').insert({ repository_id: repo.id ?? repo, url: 'http://127.0.0.1:9/', secret: 's', events: '["*"]', created_at: now, updated_at: now });
  const event: NewEvent = { repositoryId: Number(repo.id ?? repo), type: 'issue', action: 'opened', senderId: null, payload: { action: 'opened' } };

  await t.rejects(recordEvents(db, [event]), /No event fan-out is registered.*useFanOut\(webhookFanOut\)/, 'recordEvents names what to call');
  await t.rejects(
    db.transaction((trx) => recordOrgEvents(trx, [{ ...event, repositoryId: null, orgId: Number(org.id ?? org), type: 'repository', action: 'created' }])),
    /No event fan-out is registered/,
    'so does recordOrgEvents',
  );
  t.equal(Number((await db('events').count({ n: '*' }))[0].n), 0, 'no event was written without its deliveries');

  useFanOut(webhookFanOut);
  const [id] = await recordEvents(db, [event]);
  t.equal(Number((await db('deliveries').where('event_id', id).count({ n: '*' }))[0].n), 1, 'once registered, the event is written with its delivery');
});

t.test('the fan-out is registered once per process: the same one again is accepted, another one refused', async (t) => {
  useFanOut(webhookFanOut);
  t.doesNotThrow(() => useFanOut(webhookFanOut), 'the same fan-out again');
  t.throws(() => useFanOut({ ...webhookFanOut }), /Another event fan-out is registered already/, 'another one');
});
