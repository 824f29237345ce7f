import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startServer } from '../../src/server.ts';
import { connect } from '../../src/db/connect.ts';
import { newPushLog, parseRefListing, preparePushLogs, readPushLog } from '../../src/pushes/log.ts';
import { insertPushRecord } from '../../src/pushes/records.ts';
import { buildRepo, buildUser, listenToEvents, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';

const ZERO = '0'.repeat(40);

/** Push events recorded after event id `after`, payloads parsed. */
async function eventsSince(w: TestWharf, after: number): Promise<any[]> {
  await w.pushesRecorded();
  const rows = await w.running.services.db('events').where('id', '>', after).orderBy('id').select('id', 'type', 'ref', 'sender_id', 'payload');
  return rows.map((r: any) => ({ ...r, id: Number(r.id), payload: JSON.parse(r.payload) }));
}

async function lastEventId(w: TestWharf): Promise<number> {
  await w.pushesRecorded();
  const row = await w.running.services.db('events').max('id as id').first();
  return Number(row?.id ?? 0);
}

/** A Wharf with acme/app, a member `ann` who may push to it, and an empty local repository to push from. */
async function pushSetup(t: Parameters<typeof startWharf>[0]) {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app');
  await listenToEvents(w, repo);
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  return { w, ann, repo, g, work };
}

t.test('push events are exact for create, fast-forward, branch from an old commit, force, delete and tags', async (t) => {
  const { w, ann, g, work } = await pushSetup(t);
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/app', ann.token)], { cwd: work });

  /** The payload commit object of `sha`, read from the client's own repository. */
  const commit = async (sha: string, distinct = true) => {
    const [message, timestamp] = (await g.ok(['show', '-s', '--format=%B%x00%aI', sha], { cwd: work })).split('\0');
    return {
      id: sha,
      message: message.replace(/\n+$/, ''),
      timestamp: timestamp.trim(),
      url: `${w.config.baseUrl}/acme/app/commit/${sha}`,
      distinct,
      author: { name: 'Ada Lovelace', email: 'ada@example.com' },
    };
  };
  const repository = { id: 1, name: 'app', full_name: 'acme/app', url: `${w.config.baseUrl}/acme/app`, visibility: 'private', default_branch: 'main' };
  const push = async (...args: string[]) => {
    const since = await lastEventId(w);
    const r = await g.run(['push', 'origin', ...args], { cwd: work });
    t.equal(r.code, 0, `git push ${args.join(' ')}`);
    return eventsSince(w, since);
  };
  const expectOne = async (events: any[], payload: Record<string, unknown>, what: string) => {
    t.equal(events.length, 1, `${what}: one event`);
    t.equal(events[0]?.ref, payload.ref, `${what}: ref stored for branch filters`);
    t.equal(events[0]?.sender_id, ann.user.id);
    t.same(
      events[0]?.payload,
      { event: 'push', ...payload, repository, organization: { login: 'acme', url: `${w.config.baseUrl}/acme` }, sender: { login: 'ann', type: 'User' } },
      what,
    );
  };

  const c1 = await g.commit(work, 'first\n\nwith a body');
  const c2 = await g.commit(work, 'second');
  await expectOne(
    await push('main'),
    {
      ref: 'refs/heads/main',
      before: ZERO,
      after: c2,
      created: true,
      deleted: false,
      forced: false,
      commits: [await commit(c1), await commit(c2)],
      total_commits: 2,
      head_commit: await commit(c2),
    },
    'create',
  );

  const c3 = await g.commit(work, 'third');
  await expectOne(
    await push('main'),
    {
      ref: 'refs/heads/main',
      before: c2,
      after: c3,
      created: false,
      deleted: false,
      forced: false,
      commits: [await commit(c3)],
      total_commits: 1,
      head_commit: await commit(c3),
    },
    'fast-forward',
  );

  await expectOne(
    await push(`${c1}:refs/heads/old`),
    {
      ref: 'refs/heads/old',
      before: ZERO,
      after: c1,
      created: true,
      deleted: false,
      forced: false,
      commits: [],
      total_commits: 0,
      head_commit: await commit(c1, false),
    },
    'a branch at a commit already pushed lists no commits',
  );

  await g.ok(['reset', '-q', '--hard', c2], { cwd: work });
  const c4 = await g.commit(work, 'rewritten third');
  await expectOne(
    await push('--force', 'main'),
    {
      ref: 'refs/heads/main',
      before: c3,
      after: c4,
      created: false,
      deleted: false,
      forced: true,
      commits: [await commit(c4)],
      total_commits: 1,
      head_commit: await commit(c4),
    },
    'force-push',
  );

  await expectOne(
    await push('--force', `${c1}:refs/heads/main`),
    {
      ref: 'refs/heads/main',
      before: c4,
      after: c1,
      created: false,
      deleted: false,
      forced: true,
      commits: [],
      total_commits: 0,
      head_commit: await commit(c1, false),
    },
    'rewinding a branch is forced',
  );

  await expectOne(
    await push(':refs/heads/old'),
    {
      ref: 'refs/heads/old',
      before: c1,
      after: ZERO,
      created: false,
      deleted: true,
      forced: false,
      commits: [],
      total_commits: 0,
      head_commit: null,
    },
    'delete',
  );

  await g.ok(['checkout', '-q', '-b', 'topic', c4], { cwd: work });
  const c5 = await g.commit(work, 'tagged only');
  await g.ok(['tag', '-a', '-m', 'version one', 'v1', c5], { cwd: work });
  const tagObject = (await g.ok(['rev-parse', 'v1'], { cwd: work })).trim();
  t.not(tagObject, c5, 'an annotated tag is an object of its own');
  await expectOne(
    await push('refs/tags/v1'),
    {
      ref: 'refs/tags/v1',
      before: ZERO,
      after: tagObject,
      created: true,
      deleted: false,
      forced: false,
      // main was rewound to c1, so c2 and c4 are on no ref any more: the tag brings them back.
      commits: [await commit(c2), await commit(c4), await commit(c5)],
      total_commits: 3,
      head_commit: await commit(c5),
    },
    'annotated tag: after is the tag object, commits are the new ones it reaches',
  );

  await g.ok(['tag', 'light', c2], { cwd: work });
  await expectOne(
    await push('refs/tags/light'),
    {
      ref: 'refs/tags/light',
      before: ZERO,
      after: c2,
      created: true,
      deleted: false,
      forced: false,
      commits: [],
      total_commits: 0,
      head_commit: await commit(c2, false),
    },
    'lightweight tag',
  );

  const c6 = await g.commit(work, 'on two branches');
  const both = await push(`${c6}:refs/heads/a`, `${c6}:refs/heads/b`);
  t.equal(both.length, 2, 'one event per ref');
  t.same(
    both.map((e) => e.payload.commits.map((c: any) => [c.id, c.distinct])),
    [[[c6, true]], []],
    'a commit is listed only by the first event (in ref order) that reaches it',
  );
  t.same(
    both.map((e) => e.payload.total_commits),
    [1, 1],
    'total_commits still counts it for both',
  );
  t.same(
    both.map((e) => e.payload.head_commit.distinct),
    [true, false],
  );
});

t.test('a mirror push of 2,000 branches raises 2,000 events, each with its own new commit', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await listenToEvents(w, await buildRepo(w, 'acme', 'many'));
  const g = gitClient(t);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', '--bare', src]);
  // fast-import: a root commit on main, then one commit per branch on top of it.
  let stream = 'commit refs/heads/main\nmark :1\ncommitter A <a@example.com> 1700000000 +0000\ndata 4\nroot\n\n';
  for (let i = 0; i < 2000; i++) {
    const message = `branch ${i}`;
    stream += `commit refs/heads/b${i}\ncommitter A <a@example.com> ${1700000001 + i} +0000\ndata ${message.length}\n${message}\nfrom :1\nM 644 inline f${i}\ndata ${String(i).length}\n${i}\n\n`;
  }
  await g.ok(['fast-import', '--quiet'], { cwd: src, input: stream });
  const push = await g.run(['push', '--mirror', repoUrl(w, 'acme/many', ann.token)], { cwd: src });
  t.equal(push.code, 0, 'mirror push accepted');
  const local = refList(await g.ok(['show-ref'], { cwd: src }));
  t.equal(local.length, 2001);
  t.same(refList(await g.ok(['ls-remote', repoUrl(w, 'acme/many', ann.token)])), local, 'every ref landed');

  const events = await eventsSince(w, 0);
  t.equal(events.length, 2001, 'one event per ref');
  t.same(events.map((e) => e.ref).sort(), local.map((l) => l.split(' ')[1]).sort(), 'each ref once');
  const b1999 = events.find((e) => e.ref === 'refs/heads/b1999')!.payload;
  t.equal(b1999.after, local.find((l) => l.endsWith(' refs/heads/b1999'))!.split(' ')[0]);
  t.same(
    b1999.commits.map((c: any) => c.message),
    b1999.commits.length === 2 ? ['root', 'branch 1999'] : ['branch 1999'],
    'its own commit, after the root if it came first',
  );
  const roots = events.filter((e) => e.payload.commits.some((c: any) => c.message === 'root'));
  t.equal(roots.length, 1, 'the shared root is listed by exactly one event');
  t.ok(
    events.every((e) => e.payload.commits.every((c: any) => c.distinct)),
    'every listed commit is distinct',
  );
  t.ok(events.every((e) => e.payload.commits.at(-1)?.message !== 'root' || e.ref === 'refs/heads/main'));
});

t.test('two pushes racing for one branch: one wins, the other is rejected cleanly', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await listenToEvents(w, await buildRepo(w, 'acme', 'race'));
  const g = gitClient(t);
  const url = repoUrl(w, 'acme/race', ann.token);
  const one = path.join(g.dir, 'one');
  await g.ok(['init', '-q', one]);
  await g.commit(one, 'base');
  await g.ok(['push', '-q', url, 'main'], { cwd: one });
  const two = path.join(g.dir, 'two');
  await g.ok(['clone', '-q', url, two]);
  const mine = await g.commit(one, 'mine', { 'big.txt': 'x'.repeat(300_000) });
  const theirs = await g.commit(two, 'theirs', { 'big.txt': 'y'.repeat(300_000) });
  const since = await lastEventId(w);
  const results = await Promise.all([g.run(['push', url, 'main'], { cwd: one }), g.run(['push', url, 'main'], { cwd: two })]);
  t.same(results.map((r) => r.code).sort(), [0, 1], 'exactly one push is accepted');
  const winner = results[0].code === 0 ? mine : theirs;
  t.match(await g.ok(['ls-remote', url, 'refs/heads/main']), new RegExp(`^${winner}`));
  const events = await eventsSince(w, since);
  t.same(
    events.map((e) => e.payload.after),
    [winner],
    'only the accepted update is an event',
  );
});

t.test('a push whose events a stopped process never recorded is recorded at the next start, as the repository was then', async (t) => {
  const { w, ann, repo, g, work } = await pushSetup(t);
  const c1 = await g.commit(work, 'one');
  await g.ok(['push', '-q', repoUrl(w, 'acme/app', ann.token), 'main'], { cwd: work });
  t.equal((await eventsSince(w, 0)).length, 1, 'the first push is recorded');
  await w.stop();

  // What a crash leaves: git moved main to c2 and the route stored the push record (with
  // the refs after it), but no event was written. A later push, before the restart, made a branch at c2.
  const c2 = await g.commit(work, 'two');
  const bare = `file://${path.join(w.config.reposDir, 'acme', 'app.git')}`;
  await g.ok(['push', '-q', bare, 'main'], { cwd: work });
  const db = connect(w.database.url);
  await insertPushRecord(db, repo.id, ann.user.id, {
    updates: [{ before: c1, after: c2, ref: 'refs/heads/main' }],
    refsAfter: new Map([['refs/heads/main', c2]]),
    landedAt: Date.now(),
  });
  await db.destroy();
  await g.ok(['push', '-q', bare, 'main:refs/heads/later'], { cwd: work });

  const again = await startServer({ ...w.config, port: 0 }, { logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    const left = async () => Number(((await again.services.db('push_records').count({ n: '*' })) as any[])[0].n);
    await waitFor(async () => (await left()) === 0, { timeoutMs: 10_000, what: 'the push record to be recorded' });
    t.equal(await left(), 0, 'the push record is gone once recorded');
    const events = (await again.services.db('events').orderBy('id').select('payload')).map((r: any) => JSON.parse(r.payload));
    t.equal(events.length, 2, 'the interrupted push is recorded at start');
    const last = events[1];
    t.same([last?.before, last?.after, last?.sender.login], [c1, c2, 'ann']);
    t.same(
      last?.commits.map((c: any) => c.id),
      [c2],
      'c2 is new: the branch made after the push does not hide it',
    );
  } finally {
    await again.stop();
  }
});

t.test("a push log reads back the hook's updates and the refs after them", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-pushlog-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  await preparePushLogs(dir);
  const a = 'a'.repeat(40);
  const b = 'b'.repeat(40);
  const file = newPushLog(dir);
  t.equal(await readPushLog(file), null, 'nothing landed: no log');
  fs.writeFileSync(file, `${ZERO} ${a} refs/heads/main\n${a} ${b} refs/tags/v1\n\n${a} refs/heads/main\n${b} refs/tags/v1\n.\n`);
  const landed = await readPushLog(file);
  t.same(landed?.updates, [
    { before: ZERO, after: a, ref: 'refs/heads/main' },
    { before: a, after: b, ref: 'refs/tags/v1' },
  ]);
  t.same(
    [...landed!.refsAfter!],
    [
      ['refs/heads/main', a],
      ['refs/tags/v1', b],
    ],
  );
  t.equal(parseRefListing(`${a} refs/heads/main\n`), undefined, 'a listing cut short is not used');
  t.same([...parseRefListing('.\n')!], [], 'no refs left after the push');
});

t.test('a push is in the database when it returns, and a stop right after it loses nothing: its events are recorded once', async (t) => {
  const { w, ann, g, work } = await pushSetup(t);
  for (let i = 0; i < 20; i++) await g.commit(work, `c${i}`);
  await g.ok(['push', '-q', repoUrl(w, 'acme/app', ann.token), 'main'], { cwd: work });
  await w.stop();
  const db = connect(w.database.url);
  try {
    const [records, events] = await Promise.all([db('push_records').count({ n: '*' }), db('events').count({ n: '*' })]);
    t.equal(Number((records as any[])[0].n) + Number((events as any[])[0].n), 1, 'the push is recorded or still waiting, never lost');
  } finally {
    await db.destroy();
  }
  const again = await startServer({ ...w.config, port: 0 }, { logDestination: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    const count = async (table: string) => Number(((await again.services.db(table).count({ n: '*' })) as any[])[0].n);
    await waitFor(async () => (await count('push_records')) === 0, { timeoutMs: 10_000, what: 'the push record to be recorded' });
    const rows = await again.services.db('events').select('payload');
    t.equal(rows.length, 1, 'one event');
    t.equal(JSON.parse(rows[0]?.payload ?? '{}').commits?.length, 20, 'with every new commit');
  } finally {
    await again.stop();
  }
});
