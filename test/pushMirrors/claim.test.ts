import os from 'node:os';
import t from 'tap';
import { buildRepo, startWharf } from '../helpers/wharf.ts';
import { nodeId } from '../../src/work/nodeId.ts';
import { claimPushMirrors, finishPushMirrorSync, renewPushMirrorLease, sweepDeadPushMirrorOwners } from '../../src/pushMirrors/claim.ts';
import { createPushMirror, findPushMirror } from '../../src/pushMirrors/store.ts';
import { markPushMirrorsDue } from '../../src/domain/pushMirrorsDue.ts';

t.test('one sync at a time per mirror: claims, leases, take-over, and a push during a sync', async (t) => {
  // No workers: this test is the only one claiming.
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, workers: [] });
  const { db, config } = w.running.services;
  const repo = await buildRepo(w, 'acme', 'proj');
  const other = await buildRepo(w, 'acme', 'other');
  const a = nodeId(config.dataDir);
  const b = nodeId(config.dataDir);
  const onPush = await createPushMirror(w.running.services, repo, null, { url: 'http://127.0.0.1:9/a.git' });
  const noPush = await createPushMirror(w.running.services, repo, null, { url: 'http://127.0.0.1:9/b.git', sync_on_push: false, interval: '1h' });
  await createPushMirror(w.running.services, other, null, { url: 'http://127.0.0.1:9/c.git' });

  const first = await claimPushMirrors(db, a, 10, 30_000);
  t.equal(first.length, 3, 'every new mirror is due at once');
  t.same(await claimPushMirrors(db, b, 10, 30_000), [], 'held mirrors are not claimed twice');
  t.ok(await renewPushMirrorLease(db, onPush.id, a, 30_000));
  t.notOk(await renewPushMirrorLease(db, onPush.id, b, 30_000), 'only the holder renews');
  t.notOk(await finishPushMirrorSync(db, first[0], b, 'succeeded', null, Date.now()), 'only the holder writes a result');

  // A push lands while the syncs run: the mirror that syncs on push is due again after its sync.
  t.equal(await markPushMirrorsDue(db, repo.id), 1, 'only the mirror that syncs on push');
  for (const m of first) t.ok(await finishPushMirrorSync(db, m, a, 'succeeded', null, Date.now()));
  t.ok((await findPushMirror(db, onPush.id))!.next_sync_at <= Date.now(), 'due again: the push came after its claim');
  const quiet = (await findPushMirror(db, noPush.id))!;
  t.ok(quiet.next_sync_at >= Date.now() + 3_500_000, 'the other one an interval later');
  const again = await claimPushMirrors(db, b, 10, 30_000);
  t.same(
    again.map((m) => m.id),
    [onPush.id],
  );
  t.ok(await finishPushMirrorSync(db, again[0], b, 'failed', 'no', Date.now()));
  t.ok((await findPushMirror(db, onPush.id))!.next_sync_at > Date.now() + 28_000_000, 'then an interval (8h) later, failed or not');

  // A lease that ran out is taken over, and the death counted; the old holder can no longer write.
  await markPushMirrorsDue(db, repo.id);
  const [held] = await claimPushMirrors(db, a, 1, 30_000);
  await db('push_mirrors')
    .where('id', held.id)
    .update({ lease_expires_at: Date.now() - 1 });
  const [taken] = await claimPushMirrors(db, b, 1, 30_000);
  t.equal(taken.id, held.id);
  t.equal(taken.interruptions, 1, 'the take-over counts an interruption');
  t.notOk(await finishPushMirrorSync(db, held, a, 'succeeded', null, Date.now()), 'the node that lost it writes nothing');
  t.ok(await finishPushMirrorSync(db, taken, b, 'succeeded', null, Date.now()));
  t.equal((await findPushMirror(db, held.id))!.interruptions, 0, 'a finished sync forgives');

  // A restart on this host frees its dead predecessors' claims at once.
  await markPushMirrorsDue(db, repo.id);
  const dead = `${os.hostname()}:999999:0000dead:00000000`;
  const [claimed] = await claimPushMirrors(db, dead, 1, 30_000);
  t.equal(await sweepDeadPushMirrorOwners(db, a), 1);
  const swept = (await findPushMirror(db, claimed.id))!;
  t.equal(swept.locked_by, null);
  t.equal(swept.interruptions, 1);
  t.equal((await claimPushMirrors(db, a, 10, 30_000)).length, 1, 'claimable again at once');
});
