import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import t from 'tap';
import { startWharf, buildRepo, buildUser, listenToEvents } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { startServeProcess } from '../helpers/serveProcess.ts';
import { connect } from '../../src/db/connect.ts';
import { insertPushRecord } from '../../src/pushes/records.ts';
import { wake } from '../../src/services.ts';

const ZERO = '0'.repeat(40);

t.test('a push record whose node died while recording it, taken over for the third time, is parked; later pushes of its repository go on', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app', 'public');
  await listenToEvents(w, repo);
  const db = w.running.services.db;
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/app', ann.token)], { cwd: work });
  const c1 = await g.commit(work, 'one');
  const bare = path.join(w.config.reposDir, 'acme', 'app.git');
  await g.ok(['push', '-q', `file://${bare}`, 'main:refs/heads/twice', 'main:refs/heads/thrice'], { cwd: work });
  // As dead nodes leave them: claimed, the lease long run out; one died twice before, the other three times.
  const twice = await insertPushRecord(db, repo.id, ann.user.id, {
    updates: [{ before: ZERO, after: c1, ref: 'refs/heads/twice' }],
    refsAfter: new Map([['refs/heads/twice', c1]]),
    landedAt: Date.now(),
  });
  const thrice = await insertPushRecord(db, repo.id, ann.user.id, {
    updates: [{ before: ZERO, after: c1, ref: 'refs/heads/thrice' }],
    refsAfter: new Map([['refs/heads/thrice', c1]]),
    landedAt: Date.now(),
  });
  await db('push_records').where('id', twice).update({ locked_by: 'gone:/a', locked_at: 1, interruptions: 1 });
  await db('push_records').where('id', thrice).update({ locked_by: 'gone:/b', locked_at: 1, interruptions: 2 });
  wake(w.running.services).pushRecords();

  const c2 = await g.commit(work, 'two');
  await g.ok(['push', '-q', 'origin', 'main'], { cwd: work });
  await waitFor(async () => (await db('events').where({ type: 'push', ref: 'refs/heads/main' }).first('id')) ?? null, {
    what: 'the later push recorded',
    timeoutMs: 30_000,
  });
  t.ok(await db('events').where({ type: 'push', ref: 'refs/heads/twice' }).first('id'), 'a record taken over the second time is recorded');
  t.notOk(await db('events').where({ type: 'push', ref: 'refs/heads/thrice' }).first('id'), 'the one taken over the third time is not');
  const rows = await db('push_records').select('id', 'interruptions', 'last_error', 'parked_at', 'locked_by');
  t.equal(rows.length, 1, 'it is kept');
  t.match(rows[0], { id: thrice, interruptions: 3, locked_by: null });
  t.match(String(rows[0].last_error), /^parked: the node recording this push stopped 3 times/);
  t.ok(
    w.logs.some((l) => /"level":50/.test(l) && /parked/.test(l)),
    'an error line is logged',
  );
  const main = await db('events').where({ type: 'push', ref: 'refs/heads/main' }).first('payload');
  t.equal(JSON.parse(main.payload).after, c2);
  const metrics = await w.api('GET', '/metrics', { token: null });
  t.match(metrics.text, /wharf_parked\{kind="push_record"\} 1/);
  t.match(metrics.text, /wharf_push_records\{state="waiting"\} 0/);
  t.match(metrics.text, /wharf_push_records\{state="parked"\} 1/);
  const listed = await w.api('GET', '/api/v1/repos/acme/app/push-records');
  t.equal(listed.status, 200);
  t.match(listed.body, [{ id: thrice, state: 'parked', next_try_at: null, last_error: /^parked: / }], 'the API lists it parked, with why');
  t.equal(listed.body.length, 1, 'and nothing else is pending');
  const page = await (await fetch(`${w.url}/acme/app`)).text();
  t.match(page, /were parked|was parked/, "the repository's page says it is parked");
  t.notMatch(page, /next try/, 'and promises no next try');
});

t.test('a restarted node counts the claims its dead predecessor held; the third death parks the record', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-park-'));
  const database = await createTestDatabase(dir);
  let child: ChildProcess | undefined;
  const db = connect(database.url);
  t.teardown(async () => {
    child?.kill('SIGKILL');
    await db.destroy();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const dataDir = path.join(dir, 'data');
  const env = { DATA_DIR: dataDir, REPOS_DIR: path.join(dir, 'repos'), DATABASE_URL: database.url, LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: '0' };
  const first = await startServeProcess(env, 60_000);
  child = first.child;
  const answer = await fetch(`${first.url}/api/v1/orgs/demo/repos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
    body: '{"name":"app"}',
  });
  t.equal(answer.status, 201);
  first.child.kill('SIGKILL');
  await first.exited;

  // What the killed node left: records it held, under its own name (host and DATA_DIR).
  const node = `${os.hostname()}:${dataDir}`.slice(-128);
  const repo = await db('repositories').first('id');
  const add = async (ref: string, interruptions: number) => {
    const id = await insertPushRecord(db, repo.id, null, { updates: [{ before: ZERO, after: ZERO.replace(/0/g, 'a'), ref }], landedAt: Date.now() });
    await db('push_records').where('id', id).update({ locked_by: node, locked_at: Date.now(), interruptions });
    return id;
  };
  const parked = await add('refs/heads/third-death', 2);
  const second = await startServeProcess(env, 60_000);
  child = second.child;
  const row = await waitFor(
    async () => {
      const r = await db('push_records').where('id', parked).first('interruptions', 'parked_at', 'last_error', 'locked_by');
      return r?.parked_at ? r : null;
    },
    { what: 'the record parked', timeoutMs: 30_000 },
  );
  t.equal(Number(row.interruptions), 3, 'the restart counted the death');
  t.equal(row.locked_by, null, 'no node holds it');
  t.match(String(row.last_error), /^parked: /);
  const metrics = await (await fetch(`${second.url}/metrics`)).text();
  t.match(metrics, /wharf_parked\{kind="push_record"\} 1/);
});
