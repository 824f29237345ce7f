// A push mirror whose remote accepts the connection and never answers holds its sync slot
// no longer than IMPORT_STALL_TIMEOUT, as an import or a pull mirror would, and says so.
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { buildRepo, buildUser, startWharf, type TestLike } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { mirrorRow } from './helpers.ts';

/** A server on loopback that accepts every connection, reads what comes and never answers. */
async function blackHole(t: TestLike): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

t.test('a push mirror to a remote that never answers fails after IMPORT_STALL_TIMEOUT, saying so', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '3s' } });
  const hole = await blackHole(t);
  await buildRepo(w, 'acme', 'proj');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token, body: { url: `${hole}/dst/mirror.git` } });
  t.equal(created.status, 201, created.text);

  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'first');
  const pushed = Date.now();
  await g.ok(['push', '-q', repoUrl(w, 'acme/proj', ann.token), 'main'], { cwd: src });
  const row = await waitFor(
    async () => {
      const r = await mirrorRow(w, created.body.id);
      return r.last_sync_status === 'failed' ? r : null;
    },
    { timeoutMs: 30_000, what: 'the stalled sync to fail' },
  );
  const took = Date.now() - pushed;
  t.match(row.last_error, /the remote stalled: less than 1 KiB\/s of data arrived for 3s \(IMPORT_STALL_TIMEOUT\)/, row.last_error);
  t.ok(took < 15_000, `the sync ended within a few stall windows (${took} ms), not after a fixed 30 minutes`);
  await waitFor(async () => (await mirrorRow(w, created.body.id)).locked_by === null, { timeoutMs: 10_000, what: 'the lease given back' });
  t.pass('the slot and the lease are given back');
});

t.test("two stalled push mirrors of one organization leave another organization's mirror syncing", async (t) => {
  const remote = await startWharf(t);
  await buildRepo(remote, 'dst', 'copy');
  const bob = await buildUser(remote, 'bob', { org: 'dst', role: 'owner' });
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '60s' } });
  const hole = await blackHole(t);
  await buildRepo(w, 'acme', 'proj');
  await buildRepo(w, 'beta', 'app');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const cid = await buildUser(w, 'cid', { org: 'beta', role: 'owner' });
  const stalled: number[] = [];
  for (const name of ['one', 'two']) {
    const created = await w.api('POST', '/api/v1/repos/acme/proj/push-mirrors', { token: ann.token, body: { url: `${hole}/${name}.git` } });
    t.equal(created.status, 201, created.text);
    stalled.push(created.body.id);
  }
  const fine = await w.api('POST', '/api/v1/repos/beta/app/push-mirrors', {
    token: cid.token,
    body: { url: `${remote.url}/dst/copy.git`, username: 'bob', password: bob.token },
  });
  t.equal(fine.status, 201, fine.text);

  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'first');
  // acme's push makes both of its mirrors due first; beta's comes after.
  await g.ok(['push', '-q', repoUrl(w, 'acme/proj', ann.token), 'main'], { cwd: src });
  await waitFor(async () => (await mirrorRow(w, stalled[0])).locked_by || (await mirrorRow(w, stalled[1])).locked_by, {
    what: "an acme mirror's sync to start",
  });
  await g.ok(['push', '-q', repoUrl(w, 'beta/app', cid.token), 'main'], { cwd: src });
  const synced = await waitFor(
    async () => {
      const r = await mirrorRow(w, fine.body.id);
      return r.last_sync_status ? r : null;
    },
    { timeoutMs: 30_000, what: "beta's mirror to sync while acme's remotes stall" },
  );
  t.equal(synced.last_sync_status, 'succeeded', synced.last_error ?? '');
  const acme = await Promise.all(stalled.map((id) => mirrorRow(w, id)));
  t.equal(acme.filter((r) => r.last_sync_status === null).length, 2, "acme's syncs are still stalled, not finished");
  t.equal(acme.filter((r) => r.locked_by !== null).length, 1, 'one organization ran one sync of the two slots; the other waits its turn');
});
