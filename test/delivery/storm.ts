// A storm of deliveries through real `wharf serve` processes, SIGKILLed and restarted
// along the way, to a receiver that fails a third of the time in three ways (500s,
// dropped connections, answers slower than WEBHOOK_TIMEOUT), and to a second webhook
// whose receiver always answers 500. Requests are counted as their headers arrive, as a
// receiver that counts requests counts them. Used by storm.test.ts (CI-sized) and
// bench/storm.bench.ts (10,000 deliveries).
import { createHash } from 'node:crypto';
import { gitClient } from '../helpers/git.ts';
import type { TestLike } from '../helpers/wharf.ts';
import { startReceiver, type Answer } from './receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { attemptsByGuid, startFleet, upTo } from './fleet.ts';

/** What a storm showed. */
export interface StormFigures {
  dialect: string;
  deliveries: number;
  kills: number;
  concurrency: number;
  /** Webhooks the events went to: the flaky one, and the always-failing one. */
  hooks: number;
  requests: number;
  succeeded: number;
  failed: number;
  /** Deliveries with neither a 2xx nor every scheduled attempt at the receiver. */
  lost: number;
  /** Deliveries whose attempt numbers at the receiver are not 1..k with k at most the schedule's length: a skipped or extra attempt. */
  misnumbered: number;
  /** Failed deliveries sent other than exactly the scheduled attempts (repeats at a kill aside). */
  failedShort: number;
  /** Requests repeating an attempt number the receiver had already seen for that guid. */
  repeats: number;
  /** 2xx answers beyond a delivery's first (those the sender took for a timeout left out). */
  duplicate2xx: number;
  /** Deliveries whose recorded attempts (column and attempt rows) disagree with what the receiver saw, or recorded a success the receiver never gave. */
  misrecorded: number;
  /** Deliveries of the always-failing webhook that ended failed with exactly the schedule's attempts, each seen by the receiver. */
  alwaysFailingExact: number;
  seconds: number;
}

const SCHEDULE = [0, 1000, 1000, 1000];
const TIMEOUT_MS = 1000;

/** Where the always-failing webhook points. */
const ALWAYS_500 = '/always-500';

/** The receiver's answer to one attempt: the same for a (guid, attempt) every time it comes, so a repeated attempt meets what the first met. */
export function stormAnswer(guid: string, attempt: number): Answer & { ok: boolean } {
  const b = createHash('sha1').update(`${guid}:${attempt}`).digest()[0];
  if (b % 3 !== 0) return { status: 200, ok: true };
  const how = (b >> 2) % 4;
  if (how === 2) return { reset: true, ok: false };
  if (how === 3) return { status: 500, delayMs: TIMEOUT_MS + 500, ok: false };
  return { status: 500, ok: false };
}

/** Runs the storm: `deliveries` events, a kill after each of `kills` equal parts of them got their 2xx, a restart after each kill. */
export async function runStorm(t: TestLike, o: { deliveries: number; kills: number; concurrency: number; via?: 'events' | 'push' }): Promise<StormFigures> {
  const started = Date.now();
  // Counted as they come: the receiver shares this process, so nothing here rescans what it got.
  const answeredOk = new Set<string>();
  const rx = await startReceiver(t, (r) => {
    if (r.event === 'ping') return { status: 200 };
    if (r.path === ALWAYS_500) return { status: 500 };
    const a = stormAnswer(r.guid, r.attempt);
    if (a.ok) answeredOk.add(r.guid);
    return a;
  });
  const fleet = await startFleet(
    t,
    { WEBHOOK_CONCURRENCY: String(o.concurrency), WEBHOOK_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(','), WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms` },
    rx.url,
    { secondHookPath: ALWAYS_500, events: ['issue', 'push'] },
  );
  if (o.via === 'push') await pushBranches(t, `${fleet.first.url}/demo/app.git`, fleet.first.token!, o.deliveries);
  else await fleet.raise(o.deliveries);
  let node = fleet.first;
  for (let k = 1; k <= o.kills; k++) {
    const mark = Math.floor((o.deliveries * k) / (o.kills + 1));
    await waitFor(() => answeredOk.size >= mark, { what: `${mark} deliveries to be answered 2xx before kill ${k}`, timeoutMs: 300_000 });
    await node.kill();
    node = await fleet.serve();
  }
  await waitFor(
    async () => {
      const c = await fleet.counts();
      return c.total === 2 * o.deliveries && c.pending === 0;
    },
    { what: 'every delivery to finish', timeoutMs: 300_000 },
  );
  // Counted when the headers arrived: a request Wharf recorded must have reached the receiver.
  const seen = attemptsByGuid(rx.arrivals);
  const n = SCHEDULE.length;
  let lost = 0;
  let misnumbered = 0;
  let failedShort = 0;
  let repeats = 0;
  let misrecorded = 0;
  let duplicate2xx = 0;
  let alwaysFailingExact = 0;
  const flaky = await fleet.deliveries();
  const failing = await fleet.deliveries(fleet.secondHookId);
  const rows = [...flaky.map((row) => ({ row, okFor: (a: number) => stormAnswer(row.guid, a).ok })), ...failing.map((row) => ({ row, okFor: () => false }))];
  for (const { row, okFor } of rows) {
    const attempts = seen.get(row.guid) ?? [];
    const distinct = [...new Set(attempts)].sort((a, b) => a - b);
    repeats += attempts.length - distinct.length;
    const answeredOk = distinct.some(okFor);
    // What the sender saw is not always what the receiver meant (an answer late on a busy
    // machine is a timeout to the sender), so the attempts are checked as a sequence: 1..k
    // with k the last one, all of the schedule for a failed delivery.
    const contiguous = JSON.stringify(distinct) === JSON.stringify(upTo(distinct.length)) && distinct.length <= n;
    if (!answeredOk && distinct.length < n) lost++;
    if (!contiguous) misnumbered++;
    if (row.status === 'failed' && distinct.length !== n) failedShort++;
    const recordedOk = row.attempts === distinct.length && JSON.stringify(row.recorded) === JSON.stringify(distinct);
    if (!recordedOk || (row.status === 'success' && !answeredOk)) misrecorded++;
    // 2xx answers beyond the first, leaving out those the sender recorded as a failure
    // (answered after WEBHOOK_TIMEOUT on a busy machine: rightly retried, not a duplicate).
    const oks = attempts.filter((a) => okFor(a) && !row.recordedFailures.includes(a)).length;
    duplicate2xx += Math.max(0, oks - 1);
  }
  for (const row of failing) {
    const distinct = [...new Set(seen.get(row.guid) ?? [])];
    if (row.status === 'failed' && row.attempts === n && distinct.length === n) alwaysFailingExact++;
  }
  const all = rows.map((r) => r.row);
  return {
    dialect: fleet.dialect,
    deliveries: o.deliveries,
    kills: o.kills,
    concurrency: o.concurrency,
    hooks: 2,
    requests: rx.arrivals.filter((r) => r.event !== 'ping').length,
    succeeded: all.filter((r) => r.status === 'success').length,
    failed: all.filter((r) => r.status === 'failed').length,
    lost,
    misnumbered,
    failedShort,
    repeats,
    duplicate2xx,
    misrecorded,
    alwaysFailingExact,
    seconds: (Date.now() - started) / 1000,
  };
}

/** Pushes `n` branches, each on a commit of its own, in one `git push`: one push event per branch, recorded by the node in chunks while it delivers. */
async function pushBranches(t: TestLike, url: string, token: string, n: number): Promise<void> {
  const g = gitClient(t);
  await g.ok(['init', '-q', '--bare', 'src.git']);
  const stream: string[] = [];
  for (let i = 1; i <= n; i++) {
    const message = `branch ${i}\n`;
    stream.push(
      `commit refs/heads/b${i}`,
      `committer Ada Lovelace <ada@example.com> ${1_700_000_000 + i} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
    );
  }
  await g.ok(['fast-import', '--quiet'], { cwd: `${g.dir}/src.git`, input: stream.join('\n') + '\n' });
  const target = new URL(url);
  target.username = 'x';
  target.password = token;
  await g.ok(['push', '-q', target.toString(), 'refs/heads/*:refs/heads/*'], { cwd: `${g.dir}/src.git` });
}
