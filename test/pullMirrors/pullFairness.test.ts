// Pull mirror syncs share a node's slots between organizations: two syncs of one
// organization crawling from a slow source leave another organization's mirror syncing.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildSource, startGitDaemon, waitForJob } from '../import/helpers.ts';
import { sourceProxy } from './pullProxy.ts';

const mirrorOf = (w: TestWharf, org: string, name: string) =>
  w.running.services
    .db('repository_mirrors as m')
    .join('repositories as r', 'r.id', 'm.repository_id')
    .join('orgs as o', 'o.id', 'r.org_id')
    .where({ 'o.name': org, 'r.name': name })
    .first('m.locked_by', 'm.last_sync_at', 'm.last_sync_status', 'm.last_error');

t.test("two slow pull mirror syncs of one organization leave another organization's mirror syncing", async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '60s' } });
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const cid = await buildUser(w, 'cid', { org: 'beta', role: 'owner' });
  const g = gitClient(t);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const proxy = await sourceProxy(t, daemon.port);
  const imported = async (token: string, org: string, name: string, url: string) => {
    const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: url, target_org: org, name, mirror: true } });
    t.equal(created.status, 202, created.text);
    t.equal((await waitForJob(w, created.body.id, { token })).status, 'succeeded');
  };
  // acme's two mirrors read through the proxy, beta's straight from the source.
  await imported(ann.token, 'acme', 'one', `git://127.0.0.1:${proxy.port}/source.git`);
  await imported(ann.token, 'acme', 'two', `git://127.0.0.1:${proxy.port}/source.git`);
  await imported(cid.token, 'beta', 'app', daemon.url('source'));

  // The proxy now crawls (a few bytes a second, above nothing so the stall limit does not end it soon).
  proxy.rate = 1;
  for (const name of ['one', 'two']) t.equal((await w.api('POST', `/api/v1/repos/acme/${name}/mirror/sync`, { token: ann.token })).status, 202);
  await waitFor(async () => (await mirrorOf(w, 'acme', 'one')).locked_by || (await mirrorOf(w, 'acme', 'two')).locked_by, {
    what: "an acme mirror's sync to start",
  });
  const before = Date.now();
  t.equal((await w.api('POST', '/api/v1/repos/beta/app/mirror/sync', { token: cid.token })).status, 202);
  const synced = await waitFor(
    async () => {
      const m = await mirrorOf(w, 'beta', 'app');
      return m.locked_by === null && Number(m.last_sync_at) >= before ? m : null;
    },
    { timeoutMs: 30_000, what: "beta's mirror to sync while acme's crawl" },
  );
  t.equal(synced.last_sync_status, 'succeeded', synced.last_error ?? '');
  const acme = [await mirrorOf(w, 'acme', 'one'), await mirrorOf(w, 'acme', 'two')];
  t.equal(acme.filter((m) => m.locked_by !== null).length, 1, 'acme runs one sync of the two slots; its other waits its turn');
  proxy.rate = 0;
});
