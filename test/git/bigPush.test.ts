import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { startWharf, buildRepo, buildUser } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl } from '../helpers/git.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { buildWebhook } from '../delivery/build.ts';
import { generateShapedRepo, shapeCounts } from './bigRepo.ts';

// A mirror push shaped like a big GitHub project's: a long main line, branches, tags
// and thousands of refs/pull/* refs, some with commits of their own.
const SHAPE = { mainCommits: 4800, branches: 60, tags: 600, pulls: 2400 };

t.test(
  'a mirror push of 3,000+ refs and 5,000+ commits: events for branches and tags only, each commit listed once, all delivered, health answering throughout',
  async (t) => {
    const counts = shapeCounts(SHAPE);
    t.ok(counts.refs >= 3000 && counts.commits >= 5000, `${counts.refs} refs, ${counts.commits} commits`);
    const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_CONCURRENCY: '16' } });
    const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
    const repo = await buildRepo(w, 'acme', 'big');
    const rx = await startReceiver(t);
    const hook = await buildWebhook(w, repo, rx, { events: ['push'] });
    const g = gitClient(t);
    const src = path.join(g.dir, 'src.git');
    await generateShapedRepo(src, SHAPE);
    const expected = 1 + SHAPE.branches + SHAPE.tags;

    // Health is asked every 50 ms from the push's start until the last delivery arrives.
    let probing = true;
    let worst = 0;
    let pushed = false;
    let worstDuringPush = 0;
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    let asked = 0;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        const res = await fetch(`${w.url}/api/v1/health`);
        await res.arrayBuffer();
        const took = performance.now() - started;
        if (pushed) worst = Math.max(worst, took);
        else worstDuringPush = Math.max(worstDuringPush, took);
        asked++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const push = await g.run(['push', '--mirror', repoUrl(w, 'acme/big', ann.token)], { cwd: src });
    t.equal(push.code, 0, 'mirror push accepted');
    pushed = true;
    const loopDuringPush = loop.max / 1e6;
    loop.reset();
    const pushes = () => rx.received.filter((r) => r.event === 'push' && r.hookId === hook.id);
    await waitFor(() => new Set(pushes().map((r) => r.guid)).size >= expected, { what: 'every push event delivered', timeoutMs: 240_000 });
    probing = false;
    await probe;
    loop.disable();
    t.comment(
      `worst health latency: ${Math.round(worstDuringPush)} ms while git pushed, ${Math.round(worst)} ms while recording; worst event-loop delay ${Math.round(loopDuringPush)} ms / ${Math.round(loop.max / 1e6)} ms`,
    );
    // What this guards against is recording that holds the event loop for the push's length
    // (seconds); the bound leaves room for a machine whose two cores this process shares
    // with git, the receiver and another test file (420 ms seen there, 200 ms failed).
    t.ok(worst < 500, `GET /api/v1/health answered within 500 ms throughout recording (worst ${Math.round(worst)} ms over ${asked} calls)`);

    const local = refList(await g.ok(['show-ref'], { cwd: src }));
    t.same(refList(await g.ok(['ls-remote', repoUrl(w, 'acme/big', ann.token)])), local, 'every ref is stored and served, refs/pull/* too');
    // Every push is recorded and every push delivery settled: no event can be raised or sent any more, so the receiver's count is final.
    await w.pushesRecorded();
    await deliveriesSettled(w.running.services.db, { webhookId: hook.id, event: 'push', count: expected });
    const byGuid = new Map(pushes().map((r) => [r.guid, JSON.parse(r.body.toString())]));
    t.equal(byGuid.size, expected, 'one event per branch and tag, none for refs/pull/*');
    t.ok(
      pushes().every((r) => r.signatureOk),
      'every delivery signed',
    );
    const payloads = [...byGuid.values()];
    const raised = payloads.map((p) => p.ref).sort();
    t.same(
      raised,
      local
        .map((l) => l.split(' ')[1])
        .filter((r) => r.startsWith('refs/heads/') || r.startsWith('refs/tags/'))
        .sort(),
      'exactly the branches and tags',
    );
    const listed = payloads.flatMap((p) => p.commits.map((c: any) => c.id));
    t.equal(new Set(listed).size, listed.length, `each commit listed at most once in the push (${listed.length} listed)`);
    const main = payloads.find((p) => p.ref === 'refs/heads/main');
    t.equal(main.total_commits, SHAPE.mainCommits, 'main counts all its new commits');
    t.equal(main.commits.length, 2048, 'and lists the newest 2,048');
    const topics = payloads.filter((p) => p.ref.startsWith('refs/heads/topic/'));
    t.ok(
      topics.every((p) => p.commits.length === 1 && p.commits[0].message.startsWith('branch ') && p.total_commits > 1),
      'a branch lists only its own commit; main listed the rest',
    );
    t.ok(
      payloads.filter((p) => p.ref.startsWith('refs/tags/')).every((p) => p.commits.length === 0 && p.total_commits > 0),
      'tags list nothing new but count what they reach',
    );
  },
);
