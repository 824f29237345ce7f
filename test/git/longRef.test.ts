import path from 'node:path';
import t from 'tap';
import { startWharf, buildRepo, buildUser, listenToEvents } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { insertPushRecord } from '../../src/pushes/records.ts';
import { wake } from '../../src/services.ts';

const ZERO = '0'.repeat(40);
/** A branch git takes (no component over 255 bytes) whose ref is longer than the 1,024 characters events.ref holds. */
const LONG = Array.from({ length: 6 }, (_, i) => `${i}${'x'.repeat(199)}`).join('/');

t.test('a ref longer than 1,024 bytes is refused at push time with a message git shows; the repository takes pushes and raises events as before', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app', 'public');
  await listenToEvents(w, repo);
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/app', ann.token)], { cwd: work });
  const c1 = await g.commit(work, 'one');
  await g.ok(['branch', LONG], { cwd: work });
  t.ok(`refs/heads/${LONG}`.length > 1024, 'the ref is over 1,024 characters, and git makes it');

  const refused = await g.run(['push', 'origin', 'main', LONG], { cwd: work });
  t.not(refused.code, 0, 'the push fails');
  t.match(refused.stderr, /remote: .*longer than 1024 bytes/, 'git shows why, as a remote: line');
  t.match(refused.stderr, /pre-receive hook declined/);
  const listed = await g.ok(['ls-remote', 'origin'], { cwd: work });
  t.notMatch(listed, /xxxxxxxxxx/, 'the long ref is not on the server');
  t.notMatch(listed, /refs\/heads\/main/, 'nothing of the refused push landed');

  await g.ok(['push', '-q', 'origin', 'main'], { cwd: work });
  await w.pushesRecorded();
  const events = await w.running.services.db('events').where('type', 'push').select('ref', 'payload');
  t.same(
    events.map((e: any) => [e.ref, JSON.parse(e.payload).after]),
    [['refs/heads/main', c1]],
    'the next push raises its event',
  );
});

t.test(
  'a push record that fails for a reason of its own does not hold up the later pushes of its repository (Postgres: it is parked at once; SQLite stores the long ref)',
  async (t) => {
    const w = await startWharf(t);
    const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
    const repo = await buildRepo(w, 'acme', 'app', 'public');
    await listenToEvents(w, repo);
    const db = w.running.services.db;
    const g = gitClient(t);
    const work = path.join(g.dir, 'work');
    await g.ok(['init', '-q', work]);
    const c1 = await g.commit(work, 'one');
    await g.ok(['branch', LONG], { cwd: work });
    // A record of such a ref, as one written before refs were bounded at push time leaves it.
    const bare = path.join(w.config.reposDir, 'acme', 'app.git');
    await g.ok(['push', '-q', `file://${bare}`, LONG], { cwd: work });
    const ref = `refs/heads/${LONG}`;
    await insertPushRecord(db, repo.id, ann.user.id, { updates: [{ before: ZERO, after: c1, ref }], refsAfter: new Map([[ref, c1]]), landedAt: Date.now() });
    wake(w.running.services).pushRecords();

    await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/app', ann.token)], { cwd: work });
    const c2 = await g.commit(work, 'two');
    await g.ok(['push', '-q', 'origin', 'main'], { cwd: work });
    await waitFor(async () => (await db('events').where({ type: 'push', ref: 'refs/heads/main' }).first('payload')) ?? null, {
      what: 'the later push recorded',
      timeoutMs: 30_000,
    });
    const main = await db('events').where({ type: 'push', ref: 'refs/heads/main' }).first('payload');
    t.equal(JSON.parse(main.payload).after, c2, 'the later push raised its event');

    const left = await db('push_records').select('attempts', 'last_error', 'parked_at', 'locked_by');
    if (w.database.dialect === 'postgres') {
      t.equal(left.length, 1, 'the long-ref record is kept');
      t.match(String(left[0].last_error), /^parked: /, 'its error says it is parked');
      t.match(String(left[0].last_error), /value too long/, 'and why');
      t.ok(Number(left[0].parked_at) > 0, 'parked at once, on its first failure');
      t.equal(left[0].locked_by, null);
      t.ok(
        w.logs.some((l) => /"level":50/.test(l) && /parked/.test(l)),
        'an error line is logged',
      );
      const metrics = await w.api('GET', '/metrics', { token: null });
      t.match(metrics.text, /wharf_parked\{kind="push_record"\} 1/);
      t.match(metrics.text, /wharf_push_records\{state="parked"\} 1/);
      t.match(metrics.text, /wharf_push_records\{state="failing"\} 0/, 'a parked record is not counted as failing');
      t.match(await (await fetch(`${w.url}/acme/app`)).text(), /parked/, "the repository's page says so");
    } else {
      t.equal(left.length, 0, 'SQLite holds the long ref: the record is recorded');
      t.ok(await db('events').where({ type: 'push', ref }).first('id'), 'with its event');
    }
  },
);
