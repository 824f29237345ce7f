import path from 'node:path';
import t from 'tap';
import { startWharf, buildRepo, buildUser, listenToEvents } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { insertPushRecord } from '../../src/pushes/records.ts';
import { wake } from '../../src/services.ts';

const ZERO = '0'.repeat(40);

t.test(
  'a push record that keeps failing does not take the node down: it is retried with backoff, reported (log, /metrics, repository page) and recorded once it can be',
  async (t) => {
    const w = await startWharf(t);
    const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
    const repo = await buildRepo(w, 'acme', 'app', 'public');
    await listenToEvents(w, repo);
    const g = gitClient(t);
    const work = path.join(g.dir, 'work');
    await g.ok(['init', '-q', work]);
    const c1 = await g.commit(work, 'one');
    const bare = path.join(w.config.reposDir, 'acme', 'app.git');
    await g.ok(['push', '-q', `file://${bare}`, 'main'], { cwd: work });
    // A record naming a ref whose object is not (yet) in the shared repository directory:
    // git cannot walk the history, so every attempt fails until the object arrives.
    const c2 = await g.commit(work, 'two, not yet on the server');
    await insertPushRecord(w.running.services.db, repo.id, ann.user.id, {
      updates: [{ before: ZERO, after: c1, ref: 'refs/heads/main' }],
      refsAfter: new Map([
        ['refs/heads/main', c1],
        ['refs/heads/elsewhere', c2],
      ]),
      landedAt: Date.now(),
    });
    wake(w.running.services).pushRecords();

    const record = async () => w.running.services.db('push_records').first('attempts', 'next_try_at', 'last_error', 'locked_by');
    const failed = await waitFor(
      async () => {
        const r = await record();
        return r && Number(r.attempts) >= 2 ? r : null;
      },
      { what: 'two failed attempts', timeoutMs: 60_000 },
    );
    t.ok(Number(failed.next_try_at) > Date.now() - 1000, 'the next try is scheduled, later');
    t.match(String(failed.last_error), /git/, 'the error is kept with the record');
    t.ok(
      w.logs.some((l) => /could not record a push; it will be tried again/.test(l)),
      'a log line says so',
    );
    const metrics = await w.api('GET', '/metrics', { token: null });
    t.match(metrics.text, /wharf_push_record_failures_total [1-9]/, '/metrics counts the failures');
    t.match(metrics.text, /wharf_push_records\{state="failing"\} 1/, '/metrics shows the record waiting');
    const page = await fetch(`${w.url}/acme/app`);
    t.match(await page.text(), /not been recorded yet/, "the repository's page tells of it");
    t.equal((await w.api('GET', '/api/v1/health')).status, 200, 'the node is up and answering');

    await g.ok(['push', '-q', `file://${bare}`, `${c2}:refs/heads/elsewhere`], { cwd: work });
    await waitFor(async () => !(await record()), { what: 'the record recorded on a later try', timeoutMs: 60_000 });
    const events = await w.running.services.db('events').where('type', 'push').select('payload');
    t.equal(events.length, 1, 'its event is recorded once');
    t.equal(JSON.parse(events[0].payload).after, c1);
    t.notMatch(await (await fetch(`${w.url}/acme/app`)).text(), /not been recorded yet/, 'the note is gone');
  },
);
