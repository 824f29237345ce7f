// Periodic jobs with three real `wharf serve` processes on one Postgres database: each
// runs on one node per period, not on every node.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createTestDatabase, postgresUrl } from '../helpers/database.ts';
import { serveEnv, startServeProcess, type ServeProcess } from '../helpers/serveProcess.ts';
import { gitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { startFleet } from '../delivery/fleet.ts';
import { startReceiver } from '../delivery/receiver.ts';

const PERIOD_MS = 1000;
const skip = postgresUrl ? false : 'several nodes need one shared Postgres database (set TEST_DATABASE_URL); SQLite is one node';

/** The log lines with message `msg` every node printed at or after `since`, parsed. */
function logged(nodes: ServeProcess[], msg: string, since = 0): any[] {
  return nodes
    .flatMap((node) => node.output().split('\n'))
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line))
    .filter((l) => Number(l.time) >= since);
}

/**
 * The passes of a periodic job every node logged with `msg` whose turns were taken between
 * `from` and `to`, in turn order, with the node that made each. A pass's line is written
 * when it ends, so it is the turn's time (turnAt) that is a period after the one before.
 */
function passes(nodes: ServeProcess[], msg: string, from: number, to: number): { node: number; at: number }[] {
  return nodes
    .flatMap((node, i) => logged([node], msg).map((l) => ({ node: i + 1, at: Number(l.turnAt) })))
    .filter((p) => p.at >= from && p.at <= to)
    .sort((a, b) => a.at - b.at);
}

t.test('three nodes prune finished deliveries and sweep expired rate limits once per period between them, not once each', { skip }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-periodic-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const key = randomBytes(32).toString('hex');
  const env = (n: number) =>
    serveEnv(path.join(dir, `node${n}`), database.url, {
      REPOS_DIR: path.join(dir, 'repos'),
      SECRET_KEY: key,
      LOG_LEVEL: 'info',
      DELIVERY_PRUNE_EVERY: `${PERIOD_MS}ms`,
      RATE_LIMIT_SWEEP_EVERY: `${PERIOD_MS}ms`,
    });
  // The first migrates the database; the other two start beside each other.
  const first = await startServeProcess(env(1), { t });
  const nodes = [first, ...(await Promise.all([startServeProcess(env(2), { t }), startServeProcess(env(3), { t })]))];
  const from = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 6 * PERIOD_MS));
  const to = Date.now();
  const periods = (to - from) / PERIOD_MS;
  // Every pass is logged (with how many rows went, often none): the passes of all three, in time order.
  for (const msg of ['pruned finished deliveries', 'swept expired rate limits']) {
    const seen = passes(nodes, msg, from, to);
    t.ok(seen.length >= periods - 2, `${msg}: ran (${seen.length} passes in ${periods.toFixed(1)} periods)`);
    t.ok(seen.length <= periods + 1, `${msg}: at most one pass a period between the three nodes: ${seen.length} in ${periods.toFixed(1)} periods`);
    const gaps = seen.slice(1).map((p, i) => p.at - seen[i].at);
    t.ok(
      gaps.every((gap) => gap >= PERIOD_MS),
      `${msg}: passes a period apart: ${JSON.stringify(seen.map((p) => `${p.node}@${p.at - from}`))}`,
    );
  }
});

t.test('three nodes: each due pull mirror and push mirror syncs once per period, a paused endpoint gets one probe at a time', { skip }, async (t) => {
  // The webhook's receiver fails every event: one failure pauses it, and its held deliveries are probed from then on.
  const rx = await startReceiver(t, (r) => ({ status: r.event === 'ping' ? 200 : 500 }));
  const fleet = await startFleet(t, { LOG_LEVEL: 'info', IMPORT_ALLOWED_HOSTS: 'loopback', WEBHOOK_PAUSE_AFTER: '1', WEBHOOK_PROBE_AFTER: '1s' }, rx.url);
  const nodes: ServeProcess[] = [fleet.first, ...(await Promise.all([fleet.serve(), fleet.serve()]))];
  const { url, token } = { url: fleet.first.url, token: fleet.first.token! };
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(url + p, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };
  await fleet.raise(2);

  // demo/app gets a commit; two pull mirrors of it and two push mirrors from it, all on the cluster itself.
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'first', { 'a.txt': 'a\n' });
  const auth = new URL(`${url}/demo/app.git`);
  auth.username = 'x';
  auth.password = token;
  await g.ok(['push', '-q', auth.href, 'main'], { cwd: work });
  for (const name of ['m1', 'm2']) {
    const job = await api('POST', '/api/v1/repos/import', {
      source_url: `${url}/demo/app.git`,
      target_org: 'demo',
      name,
      mirror: true,
      auth_username: 'x',
      auth_password: token,
    });
    t.equal(job.status, 202, `import of ${name} queued`);
    await waitFor(async () => (await api('GET', `/api/v1/repos/import/${job.body.id}`)).body.status === 'succeeded', { what: `import of ${name}` });
  }
  for (const name of ['t1', 't2']) {
    t.equal((await api('POST', '/api/v1/orgs/demo/repos', { name })).status, 201, `repository ${name} created`);
    const mirror = await api('POST', '/api/v1/repos/demo/app/push-mirrors', { url: `${url}/demo/${name}.git`, username: 'x', password: token });
    t.equal(mirror.status, 201, `push mirror to ${name} created`);
  }
  const settled = (table: string, since: number) => async () =>
    (await fleet.db(table).select('locked_by', 'last_sync_at')).every(
      (r: any) => r.locked_by === null && r.last_sync_at !== null && Number(r.last_sync_at) >= since,
    );
  await waitFor(settled('push_mirrors', 0), { what: 'the push mirrors’ first syncs' });
  // A node logs a sync just after writing it: on a busy machine the line can come after the
  // write is seen, and would be counted in the first round. Its first syncs' lines come first.
  await waitFor(() => logged(nodes, 'push mirror synced').length >= 2, { what: 'the push mirrors’ first syncs, logged' });

  // Three periods: every mirror made due at once; the three nodes' claims race for them.
  const from = Date.now();
  const ROUNDS = 3;
  for (let round = 0; round < ROUNDS; round++) {
    const start = Date.now();
    await fleet.db('repository_mirrors').update({ next_sync_at: start });
    await fleet.db('push_mirrors').update({ next_sync_at: start });
    await waitFor(settled('repository_mirrors', start), { what: `round ${round + 1} of pull mirror syncs` });
    await waitFor(settled('push_mirrors', start), { what: `round ${round + 1} of push mirror syncs` });
  }
  await new Promise((resolve) => setTimeout(resolve, 1500)); // a sync made twice would be logged by now
  const pulls = logged(nodes, 'mirror synced', from);
  t.equal(pulls.length, 2 * ROUNDS, `one pull mirror sync per mirror per period: ${pulls.length}`);
  t.same(
    pulls.map((l) => l.repository).sort(),
    Array.from({ length: ROUNDS }, () => ['demo/m1', 'demo/m2'])
      .flat()
      .sort(),
  );
  const pushes = logged(nodes, 'push mirror synced', from);
  t.equal(pushes.length, 2 * ROUNDS, `one push mirror sync per mirror per period: ${pushes.length}`);
  t.equal(new Set(pushes.map((l) => l.push_mirror)).size, 2);

  // The paused webhook's probes: one at a time, a probe interval (1 s, then doubling) apart, whichever node sends it.
  const issues = () => rx.received.filter((r) => r.event !== 'ping').map((r) => r.at);
  await waitFor(() => issues().length >= 3, { what: 'two probes of the paused webhook' });
  const probes = issues().slice(1);
  t.ok(probes.length >= 2, `the paused webhook was probed (${probes.length} probes)`);
  const gaps = probes.slice(1).map((at, i) => at - probes[i]);
  t.ok(
    gaps.every((gap) => gap >= 900),
    `probes one at a time, an interval apart: gaps ${JSON.stringify(gaps)}`,
  );
});
