import t from 'tap';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startServer } from '../../src/server.ts';
import { connect } from '../../src/db/connect.ts';
import { insertPushRecord } from '../../src/pushes/records.ts';
import { chunksOf } from '../../src/pushes/chunking.ts';
import type { PlannedEvent } from '../../src/domain/pushEvents.ts';
import { buildRepo, buildUser, listenToEvents, startWharf } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';

const ZERO = '0'.repeat(40);

/** `n` planned ref updates listing `commits` commits each. */
const plans = (n: number, commits = 1): PlannedEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    update: { before: ZERO, after: 'a'.repeat(40), ref: `refs/heads/b${i}` },
    headId: 'a'.repeat(40),
    total: commits,
    listed: Array.from({ length: commits }, (_, k) => `${i}-${k}`),
    forced: false,
  }));

t.test('chunks grow from 50 refs to 400 and close at 2,048 listed commits; records of the first scheme keep chunks of 50', async (t) => {
  t.same(
    chunksOf(plans(3000)).map((c) => c.length),
    [50, 100, 200, 400, 400, 400, 400, 400, 400, 250],
    'a 3,000-branch push is 10 transactions',
  );
  t.same(
    chunksOf(plans(120), 1).map((c) => c.length),
    [50, 50, 20],
  );
  t.same(
    chunksOf(plans(10, 1000)).map((c) => c.length),
    [2, 2, 2, 2, 2],
    'no chunk lists more than 2,048 commits',
  );
  t.same(
    chunksOf(plans(1)).map((c) => c.length),
    [1],
  );
});

t.test('a push record half recorded in 50-ref chunks by an earlier version resumes with that split: each remaining ref once, none skipped', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  await w.stop();

  // 120 branches land in the repository; the earlier version had recorded its first two chunks (refs 0–99 in ref order) when it stopped.
  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '--bare', src]);
  let stream = '';
  for (let i = 0; i < 120; i++)
    stream += `commit refs/heads/b${String(i).padStart(3, '0')}\ncommitter A <a@example.com> ${1700000000 + i} +0000\ndata 2\nc\nM 644 inline f\ndata ${String(i).length}\n${i}\n\n`;
  await g.ok(['fast-import', '--quiet'], { cwd: src, input: stream });
  await g.ok(['push', '-q', '--mirror', `file://${path.join(w.config.reposDir, 'acme', 'app.git')}`], { cwd: src });
  const refs = (await g.ok(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: src }))
    .trim()
    .split('\n')
    .map((l) => l.split(' ') as [string, string]);
  const db = connect(w.database.url);
  const id = await insertPushRecord(db, repo.id, ann.user.id, {
    updates: refs.map(([sha, ref]) => ({ before: ZERO, after: sha, ref })),
    refsAfter: new Map(refs.map(([sha, ref]) => [ref, sha])),
    landedAt: Date.now(),
  });
  await db('push_records').where({ id }).update({ chunking: null, chunks_done: 2 });
  await db.destroy();

  const again = await startServer({ ...w.config, port: 0 }, { logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    const left = async () => Number(((await again.services.db('push_records').count({ n: '*' })) as any[])[0].n);
    await waitFor(async () => (await left()) === 0, { timeoutMs: 10_000, what: 'the push record to be recorded' });
    const recorded = (await again.services.db('events').where('type', 'push').orderBy('ref').select('ref')).map((r: any) => r.ref);
    t.same(
      recorded,
      refs.slice(100).map(([, ref]) => ref),
      'refs b100–b119, the third 50-ref chunk, are recorded; none of the first 100 again',
    );
  } finally {
    await again.stop();
  }
});
