import t from 'tap';
import path from 'node:path';
import { startWharf, buildRepo, buildUser, type TestWharf } from '../helpers/wharf.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import { MAX_PAYLOAD_BYTES, TRUNCATED_MARK } from '../../src/events/payloadCap.ts';
import type { NewEvent } from '../../src/events/types.ts';
import type { Repository } from '../../src/domain/repos.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook } from '../delivery/build.ts';

t.test('a real push over 25 MB is delivered cut to its newest commits, under the cap, total_commits true', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'big');
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  const rx = await startReceiver(t);
  await buildWebhook(w, repo, rx, { events: ['push'] });
  // 60 commits with 500 KB messages, written in one git fast-import run: about 30 MB of payload.
  const COMMITS = 60;
  const stream: string[] = [];
  for (let i = 1; i <= COMMITS; i++) {
    const message = `commit ${i}\n\n${'x'.repeat(500_000)}\n`;
    const file = `${i}\n`;
    stream.push(
      `commit refs/heads/main\nmark :${i}\ncommitter Ada Lovelace <ada@example.com> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(message)}\n${message}`,
      i > 1 ? `from :${i - 1}\n` : '',
      `M 644 inline n.txt\ndata ${file.length}\n${file}\n`,
    );
  }
  await g.ok(['fast-import', '--quiet'], { cwd: work, input: stream.join('') });
  const tip = (await g.ok(['rev-parse', 'main'], { cwd: work })).trim();
  await g.ok(['push', '-q', repoUrl(w, 'acme/big', ann.token), 'main'], { cwd: work });

  const push = await waitFor(() => rx.received.find((r) => r.event === 'push'), { what: 'the push delivery', timeoutMs: 60_000 });
  t.ok(push.body.length <= 25_000_000, `the body (${push.body.length} bytes) is at most 25 MB`);
  t.ok(push.signatureOk, 'signed over the bytes sent');
  const payload = JSON.parse(push.body.toString('utf8'));
  t.equal(payload.total_commits, COMMITS, 'total_commits counts every new commit');
  t.ok(payload.commits.length < COMMITS && payload.commits.length >= 45, `cut to ${payload.commits.length} commits`);
  t.equal(payload.head_commit.id, tip, 'head_commit is kept');
  t.equal(payload.commits.at(-1).id, tip, 'the newest commits are kept, the oldest dropped');
  t.match(payload.commits[0].message, new RegExp(`^commit ${COMMITS - payload.commits.length + 1}\\n`), 'a contiguous run up to the tip');
  t.ok(push.body.length + 500_500 > 25_000_000, 'no more commits were dropped than needed');
  const stored = await w.running.services.db('events').where('repository_id', repo.id).first('payload');
  t.equal(stored.payload, push.body.toString('utf8'), 'the stored payload is the cut one');
});

/** Records one event through the outbox with a small cap, as a producer would, and returns the stored payload. */
async function recordCapped(w: TestWharf, repo: Repository, event: Omit<NewEvent, 'repositoryId' | 'senderId'>, maxPayloadBytes: number): Promise<string> {
  const db = w.running.services.db;
  const [id] = await db.transaction((trx) => recordEvents(trx, [{ ...event, repositoryId: repo.id, senderId: null }], { maxPayloadBytes }));
  return (await db('events').where('id', id).first('payload')).payload;
}

const commit = (i: number, size: number) => ({
  id: String(i).padStart(40, '0'),
  message: `commit ${i}\n\n${'m'.repeat(size)}`,
  timestamp: '2026-11-24T00:00:00Z',
  url: `u/${i}`,
  distinct: true,
  author: { name: 'Ada', email: 'ada@example.com' },
});

t.test('with a small cap: a push drops its oldest commits, just enough, and keeps head_commit and total_commits', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  await buildWebhook(w, repo, rx, { events: ['push', 'issue'] });
  const commits = Array.from({ length: 50 }, (_, i) => commit(i + 1, 10_000));
  const payload = { event: 'push', ref: 'refs/heads/main', commits, total_commits: 75, head_commit: commits[49] };
  const cap = 100_000;
  t.ok(Buffer.byteLength(JSON.stringify(payload)) > 4 * cap, 'the whole payload is far over the cap');
  const stored = await recordCapped(w, repo, { type: 'push', ref: 'refs/heads/main', payload }, cap);
  const cut = JSON.parse(stored);
  t.ok(Buffer.byteLength(stored) <= cap, `stored ${Buffer.byteLength(stored)} bytes, at most the cap`);
  t.equal(cut.total_commits, 75, 'total_commits as it was');
  t.same(cut.head_commit, commits[49], 'head_commit whole');
  t.same(cut.commits, commits.slice(50 - cut.commits.length), 'the newest commits, whole and in order');
  const oneMore = { ...payload, commits: commits.slice(50 - cut.commits.length - 1) };
  t.ok(Buffer.byteLength(JSON.stringify(oneMore)) > cap, 'one more commit would not have fitted');
  t.notOk(stored.includes(TRUNCATED_MARK), 'no string was cut');

  // A head commit whose message alone is over the cap: the last resort cuts strings.
  const giant = commit(99, 3 * cap);
  const alone = JSON.parse(
    await recordCapped(w, repo, { type: 'push', ref: 'refs/heads/main', payload: { ...payload, commits: [...commits, giant], head_commit: giant } }, cap),
  );
  t.same(alone.commits, [], 'every commit dropped');
  t.ok(alone.head_commit.message.endsWith(TRUNCATED_MARK), 'the giant message is cut, and says so');
  t.equal(alone.head_commit.id, giant.id, 'short fields untouched');
  t.equal(alone.total_commits, 75);
});

t.test('with a small cap: another event over it has its long strings cut, ids and short fields untouched', async (t) => {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
  const repo = await buildRepo(w, 'acme', 'app');
  const rx = await startReceiver(t);
  await buildWebhook(w, repo, rx, { events: ['issue'] });
  const cap = 50_000;
  const payload = {
    event: 'issue',
    action: 'opened',
    issue: { number: 7, title: 'Big', body: 'é'.repeat(40_000), labels: ['x'.repeat(30_000)], assignees: [] },
  };
  const stored = await recordCapped(w, repo, { type: 'issue', action: 'opened', payload }, cap);
  t.ok(Buffer.byteLength(stored) <= cap, `stored ${Buffer.byteLength(stored)} bytes, at most the cap`);
  t.ok(Buffer.byteLength(stored) > cap / 2, 'not cut far more than needed');
  const issue = JSON.parse(stored).issue;
  t.same([issue.number, issue.title, issue.assignees], [7, 'Big', []]);
  t.ok(issue.body.endsWith(TRUNCATED_MARK) && issue.body.startsWith('éé'), 'the body is cut and marked');
  const small = { event: 'issue', action: 'opened', issue: { number: 8, title: 'Small', body: 'fine' } };
  t.equal(
    await recordCapped(w, repo, { type: 'issue', action: 'opened', payload: small }, cap),
    JSON.stringify(small),
    'a payload under the cap is stored as it is',
  );
  t.equal(MAX_PAYLOAD_BYTES, 25_000_000, 'the real cap is 25 MB');
});
