import t from 'tap';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { startWharf, buildRepo, listenToEvents } from '../helpers/wharf.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import type { NewEvent } from '../../src/events/types.ts';

t.test('recording many large payloads lets the event loop turn between them and never sends one giant INSERT', async (t) => {
  const w = await startWharf(t);
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const db = w.running.services.db;

  // An event loop turn counter, and the turn in which each payload was serialized (JSON.stringify calls toJSON).
  let turn = 0;
  let counting = true;
  void (async () => {
    while (counting) {
      await nextTurn();
      turn++;
    }
  })();
  const serializedIn: number[] = [];
  const body = 'b'.repeat(1_000_000);
  const events: NewEvent[] = Array.from({ length: 40 }, (_, i) => ({
    repositoryId: repo.id,
    type: 'issue',
    action: 'opened',
    senderId: null,
    payload: {
      event: 'issue',
      action: 'opened',
      issue: { number: i + 1, title: `#${i + 1}`, body },
      toJSON() {
        serializedIn.push(turn);
        return { event: 'issue', action: 'opened', issue: { number: i + 1, title: `#${i + 1}`, body } };
      },
    },
  }));

  // The bytes each INSERT into events carries, as the driver is given them.
  const inserts: number[] = [];
  const onQuery = (q: any) => {
    if (/^insert into [`"]?events[`"]? /i.test(q.sql))
      inserts.push(q.bindings.reduce((n: number, b: unknown) => n + (typeof b === 'string' ? b.length : 0), 0));
  };
  db.on('query', onQuery);
  const ids = await recordEvents(db, events);
  db.off('query', onQuery);
  counting = false;

  t.equal(ids.length, 40, 'every event recorded');
  t.equal(serializedIn.length, 40, 'each payload serialized once');
  t.equal(new Set(serializedIn).size, 40, 'each 1 MB payload in an event loop turn of its own');
  t.ok(inserts.length >= 4, `the 40 MB went in ${inserts.length} INSERTs`);
  t.ok(Math.max(...inserts) < 10_000_000, `the largest INSERT carried ${Math.max(...inserts)} bytes`);
  const stored = await db('events').whereIn('id', ids).orderBy('id').select('payload');
  t.same(
    stored.map((r: any) => JSON.parse(r.payload).issue.number),
    events.map((_, i) => i + 1),
    'in order, each whole',
  );
});
