import path from 'node:path';
import type { Test } from 'tap';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startReceiver, type Received } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { allDeliveries, buildWebhook } from '../delivery/build.ts';

/** A plain (not `whsec_`) secret: its deliveries carry no Standard Webhooks headers. */
export const PLAIN_SECRET = 'It’s a secret to everybody';

/** What one run of the scenario left: the server, the receiver, the two webhooks and every delivery received. */
export interface Scenario {
  w: TestWharf;
  received: Received[];
  /** The webhook with a server-generated `whsec_` secret, and the one with PLAIN_SECRET. */
  standard: { id: number; secret: string };
  plain: { id: number; secret: string };
}

/** Calls the API and throws unless the answer has the expected status. */
async function call(w: TestWharf, token: string, method: string, url: string, status: number, body?: unknown) {
  const res = await w.api(method, `/api/v1/repos/acme/app${url}`, { token, body });
  if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
  return res.body;
}

/** Waits until every delivery of a webhook is settled and the receiver has seen each one. */
async function settled(w: TestWharf, received: Received[], hookId: number) {
  await waitFor(
    async () => {
      const { counts } = await allDeliveries(w, hookId);
      const guids = new Set(received.filter((r) => r.hookId === hookId).map((r) => r.guid));
      return counts.pending === 0 && counts.failed === 0 && guids.size === counts.total;
    },
    { what: `every delivery of webhook ${hookId} received and settled`, timeoutMs: 60_000 },
  );
}

/**
 * Makes every event type really happen on a fresh Wharf (SPEC §6), through the API and a
 * real `git push`, with two webhooks for every event at a real receiver; resolves once
 * every delivery has arrived. With `only: 'ping'` it stops after the creation pings.
 */
export async function everyEvent(t: Test, options: { only?: 'ping' } = {}): Promise<Scenario> {
  const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', BASE_URL: 'https://git.example.com' } });
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const repo = await buildRepo(w, 'acme', 'app', 'internal');
  const rx = await startReceiver(t);
  const standard = await buildWebhook(w, repo, rx, { url: `${rx.url}/standard`, events: ['*'] });
  const plain = await buildWebhook(w, repo, rx, { url: `${rx.url}/plain`, events: ['*'], secret: PLAIN_SECRET });
  const scenario = { w, received: rx.received, standard: { id: standard.id, secret: standard.secret }, plain: { id: plain.id, secret: PLAIN_SECRET } };
  if (options.only === 'ping') {
    await waitFor(() => rx.received.length === 2, { what: 'the creation pings' });
    return scenario;
  }
  const api = (method: string, url: string, status: number, body?: unknown) => call(w, ann.token, method, url, status, body);

  // Git: a branch and a tag each created, updated, force-pushed and deleted.
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', work]);
  await g.ok(['remote', 'add', 'origin', repoUrl(w, 'acme/app', ann.token)], { cwd: work });
  const git = (...args: string[]) => g.ok(args, { cwd: work });
  await g.commit(work, 'Initial commit', { 'README.md': '# app\n' });
  await git('push', '-q', 'origin', 'main');
  const mainHead = await g.commit(work, 'Describe the build', { 'README.md': '# app\n\nRun `make`.\n' });
  await git('push', '-q', 'origin', 'main');
  await git('checkout', '-q', '-b', 'topic');
  await g.commit(work, 'Try an idea', { 'idea.txt': 'first try\n' });
  await git('push', '-q', 'origin', 'topic');
  await g.commit(work, 'Refine the idea', { 'idea.txt': 'second try\n' });
  await git('push', '-q', 'origin', 'topic');
  await git('commit', '-q', '--amend', '-m', 'Refine the idea, reworded');
  await git('push', '-q', '--force', 'origin', 'topic');
  await git('tag', '-a', '-m', 'Preview', 'v0.1.0');
  await git('push', '-q', 'origin', 'v0.1.0');
  await git('tag', '-f', '-a', '-m', 'Preview, again', 'v0.1.0', 'main');
  await git('push', '-q', '--force', 'origin', 'v0.1.0');
  await git('push', '-q', 'origin', '--delete', 'topic', 'v0.1.0');

  // Issues and comments.
  const issue = await api('POST', '/issues', 201, { title: 'Build fails on ARM', body: 'The linker runs out of memory.', labels: ['bug'], assignees: ['ann'] });
  await api('PATCH', `/issues/${issue.number}`, 200, { title: 'Build fails on ARM64' });
  const comment = await api('POST', `/issues/${issue.number}/comments`, 201, { body: 'Reproduced on a Raspberry Pi 4.' });
  await api('PATCH', `/comments/${comment.id}`, 200, { body: 'Reproduced on a Raspberry Pi 4 (8 GB).' });
  await api('DELETE', `/comments/${comment.id}`, 204);
  await api('PATCH', `/issues/${issue.number}`, 200, { state: 'closed' });
  await api('PATCH', `/issues/${issue.number}`, 200, { state: 'open' });

  // A pull request: opened, edited, synchronized by a real push, closed, reopened, merged.
  await git('checkout', '-q', '-b', 'fix-arm', 'main');
  await g.commit(work, 'Link with --no-keep-memory on ARM', { Makefile: 'LDFLAGS += -Wl,--no-keep-memory\n' });
  await git('push', '-q', 'origin', 'fix-arm');
  const pull = await api('POST', '/pulls', 201, { title: 'Fix the ARM build', body: `Fixes #${issue.number}.`, head: 'fix-arm' });
  await api('PATCH', `/pulls/${pull.number}`, 200, { title: 'Fix the ARM64 build' });
  await g.commit(work, 'Explain the flag', { Makefile: '# Saves memory when linking on small boards.\nLDFLAGS += -Wl,--no-keep-memory\n' });
  await git('push', '-q', 'origin', 'fix-arm');
  await w.pushesRecorded();
  await api('PATCH', `/pulls/${pull.number}`, 200, { state: 'closed' });
  await api('PATCH', `/pulls/${pull.number}`, 200, { state: 'open' });
  const merged = await api('PUT', `/pulls/${pull.number}/merge`, 200);

  // A release (its tag is made at main), a pipeline's life and an agent's report.
  await api('POST', '/releases', 201, { tag_name: 'v1.0.0', name: 'Version 1.0.0', body: '- Builds on ARM64.' });
  const pipeline = await api('POST', '/pipelines', 201, { name: 'build', ref: 'refs/heads/main', sha: merged.sha });
  await api('PATCH', `/pipelines/${pipeline.id}`, 200, { status: 'running' });
  await api('PATCH', `/pipelines/${pipeline.id}`, 200, { status: 'success' });
  await api('POST', '/agent-actions', 201, { name: 'triage-bot', action: 'labeled', summary: 'Added label bug', target: { type: 'issue', id: issue.number } });
  await api('POST', '/agent-actions', 201, { name: 'review-bot', action: 'reviewed', summary: 'No problems found', target: { type: 'commit', id: mainHead } });

  // The ping endpoint.
  const ping = await w.api('POST', `/api/v1/webhooks/${plain.id}/ping`);
  if (ping.status !== 202) throw new Error(`ping: ${ping.status} ${ping.text}`);

  await w.pushesRecorded();
  await settled(w, rx.received, standard.id);
  await settled(w, rx.received, plain.id);
  return scenario;
}
