import os from 'node:os';
import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { waitFor } from '../helpers/wait.ts';
import { mirrorRow } from './helpers.ts';

t.test('a mirror whose node died in 3 syncs is parked, counted, and taken up again only when asked', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const base = '/api/v1/repos/acme/proj/push-mirrors';
  // Nothing listens on port 9: a sync fails at once, which is all this test needs.
  const created = await w.api('POST', base, { token: ann.token, body: { url: 'http://127.0.0.1:9/x.git' } });
  t.equal(created.status, 201, created.text);
  const db = w.running.services.db;
  await waitFor(async () => (await mirrorRow(w, created.body.id)).last_sync_status === 'failed', { what: 'the first sync' });
  // Its node died mid-sync twice already, and now a third time: a lease that ran out.
  await db('push_mirrors')
    .where('id', created.body.id)
    .update({ locked_by: `${os.hostname()}:999999:0000dead:00000000`, lease_expires_at: Date.now() - 1, interruptions: 2, next_sync_at: 0 });
  const parked = await waitFor(
    async () => {
      const row = await mirrorRow(w, created.body.id);
      return row.parked_at !== null && row.locked_by === null && row;
    },
    { what: 'the mirror parked' },
  );
  t.equal(Number(parked.interruptions), 3);
  t.match(parked.last_error, /^parked: the node syncing this push mirror stopped 3 times/);
  const shown = (await w.api('GET', `${base}/${created.body.id}`, { token: ann.token })).body;
  t.equal(shown.last_sync_status, 'failed');
  t.equal(shown.next_sync_at, null, 'no next sync while parked');
  t.match(await (await fetch(`${w.url}/metrics`)).text(), /wharf_parked\{kind="push_mirror"\} 1/);
  // A push does not take it up again; asking for a sync does.
  const asked = Date.now();
  t.equal((await w.api('POST', `${base}/${created.body.id}/sync`, { token: ann.token })).status, 202);
  const again = await waitFor(
    async () => {
      const row = await mirrorRow(w, created.body.id);
      return row.locked_by === null && Number(row.last_sync_at ?? 0) >= asked && row;
    },
    { what: 'the sync asked for' },
  );
  t.equal(again.parked_at, null);
  t.equal(Number(again.interruptions), 0);
  t.match(again.last_error, /refused|connect|ECONNREFUSED|unable/i, 'an ordinary failure now');
  t.notMatch(again.last_error, /^parked/);
});
