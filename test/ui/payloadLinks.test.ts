import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { buildUser, type TestLike, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { deliveriesSettled, waitFor } from '../helpers/wait.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { startReceiver } from './receiver.ts';

/** A link found in a payload or an API answer: where it was, and the words its page must show. */
interface Link {
  url: string;
  where: string;
  subject: string;
}

/**
 * The words a link's page must show, read from the object that carries the link, as
 * GitHub's payloads put a thing's address beside its name: an issue's or pull request's
 * title, a commit's subject (first line), a pipeline's name, a repository's or an
 * organization's name.
 */
function subjectOf(holder: Record<string, unknown>): string | undefined {
  if (typeof holder.title === 'string') return holder.title;
  if (typeof holder.message === 'string') return holder.message.split('\n')[0];
  if (typeof holder.full_name === 'string' && typeof holder.name === 'string') return holder.name;
  if (typeof holder.name === 'string') return holder.name;
  if (typeof holder.login === 'string') return holder.login;
  return undefined;
}

/** Every string under `value` that starts with the server's base URL, with where it is and its subject. */
function linksIn(value: unknown, base: string, where: string, out: Link[] = []): Link[] {
  if (Array.isArray(value)) value.forEach((v, i) => linksIn(v, base, `${where}[${i}]`, out));
  else if (value && typeof value === 'object') {
    const holder = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(holder)) {
      if (typeof v === 'string' && (v === base || v.startsWith(`${base}/`)))
        out.push({ url: v, where: `${where}.${key}`, subject: subjectOf(holder) ?? '(no subject beside it)' });
      else linksIn(v, base, `${where}.${key}`, out);
    }
  }
  return out;
}

/** A page's text as a reader sees it: tags dropped, entities decoded, white space collapsed. */
function pageText(html: string): string {
  const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, e) => entities[e])
    .replace(/\s+/g, ' ');
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Every event type and action a user can cause (SPEC §6), each of which must have reached the receiver. */
const EXPECTED = [
  'push',
  'issue opened',
  'issue edited',
  'issue closed',
  'issue reopened',
  'comment created',
  'comment edited',
  'comment deleted',
  'pull_request opened',
  'pull_request edited',
  'pull_request synchronize',
  'pull_request closed',
  'release published',
  'pipeline status_changed',
  'agent performed',
  'repository created',
  'repository deleted',
  'repository mirror_cutover',
  'import succeeded',
  'import failed',
];

/** Causes every event a user can cause in organization `demo`, through git and the API, as member `mia` where members may. */
async function causeEveryEvent(t: TestLike, w: TestWharf, member: string) {
  const api = async (method: string, url: string, status: number, body?: unknown, token?: string) => {
    const res = await w.api(method, `/api/v1${url}`, { body, token: token ?? w.adminToken });
    if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
    return res.body;
  };
  const repo = (url: string) => `/repos/demo/widgets${url}`;
  await api('POST', '/orgs/demo/repos', 201, { name: 'widgets', visibility: 'private' });

  // Git: several commits on main, a branch and a tag (light and annotated) created, a force push, and deletions.
  const g = gitClient(t);
  const work = path.join(g.dir, 'work');
  const git = (...args: string[]) => g.ok(args, { cwd: work });
  await g.ok(['init', '-q', work]);
  await git('remote', 'add', 'origin', repoUrl(w, 'demo/widgets', member));
  await g.commit(work, 'Start the widget', { 'README.md': '# Widgets\n' });
  await g.commit(work, 'Add the <frame> & its "border"', { 'frame.txt': 'frame\n' });
  const mainHead = await g.commit(work, 'Paint it blue\n\nThe body of the message is not the subject.', { 'paint.txt': 'blue\n' });
  await git('push', '-q', 'origin', 'main');
  await git('checkout', '-q', '-b', 'topic');
  await g.commit(work, 'Try an idea', { 'idea.txt': 'one\n' });
  await git('push', '-q', 'origin', 'topic');
  await git('commit', '-q', '--amend', '-m', 'Try an idea, reworded');
  await git('push', '-q', '--force', 'origin', 'topic');
  await git('tag', 'v0.1', 'main');
  await git('tag', '-a', '-m', 'Preview', 'v0.2', 'main');
  await git('push', '-q', 'origin', 'v0.1', 'v0.2');
  await git('push', '-q', 'origin', '--delete', 'topic', 'v0.1');

  // Issues and comments.
  const issue = await api('POST', repo('/issues'), 201, { title: 'The frame <wobbles>', body: 'Badly.' }, member);
  await api('PATCH', repo(`/issues/${issue.number}`), 200, { title: 'The frame <wobbles> & squeaks' }, member);
  const comment = await api('POST', repo(`/issues/${issue.number}/comments`), 201, { body: 'Seen it too.' }, member);
  await api('PATCH', repo(`/comments/${comment.id}`), 200, { body: 'Seen it twice.' }, member);
  await api('DELETE', repo(`/comments/${comment.id}`), 204, undefined, member);
  await api('PATCH', repo(`/issues/${issue.number}`), 200, { state: 'closed' }, member);
  await api('PATCH', repo(`/issues/${issue.number}`), 200, { state: 'open' }, member);

  // A pull request: opened, edited, synchronized by a push, merged (a merge commit: main moves on meanwhile).
  await git('checkout', '-q', '-b', 'fix-frame', 'main');
  await g.commit(work, 'Glue the frame', { 'frame.txt': 'frame\nglued\n' });
  await git('push', '-q', 'origin', 'fix-frame');
  const pull = await api('POST', repo('/pulls'), 201, { title: 'Fix the <frame>', head: 'fix-frame' }, member);
  await api('PATCH', repo(`/pulls/${pull.number}`), 200, { title: 'Fix the <frame> for good' }, member);
  await g.commit(work, 'Clamp it while the glue sets', { 'clamp.txt': 'clamp\n' });
  await git('push', '-q', 'origin', 'fix-frame');
  await git('checkout', '-q', 'main');
  await g.commit(work, 'Note the licence', { LICENSE: 'MIT\n' });
  await git('push', '-q', 'origin', 'main');
  await w.pushesRecorded();
  const merged = await api('PUT', repo(`/pulls/${pull.number}/merge`), 200, undefined, member);

  // A release (its tag made at main), a pipeline's life, agents' reports on an issue, a pull request and a commit.
  await api('POST', repo('/releases'), 201, { tag_name: 'v1.0', name: 'First light', body: 'Glued.' }, member);
  const pipeline = await api('POST', repo('/pipelines'), 201, { name: 'ci/build', ref: 'refs/heads/main', sha: merged.sha }, member);
  await api('PATCH', repo(`/pipelines/${pipeline.id}`), 200, { status: 'success' }, member);
  await api(
    'POST',
    repo('/agent-actions'),
    201,
    { name: 'triage-bot', action: 'labeled', summary: 'Bug', target: { type: 'issue', id: issue.number } },
    member,
  );
  await api(
    'POST',
    repo('/agent-actions'),
    201,
    { name: 'review-bot', action: 'reviewed', summary: 'Fine', target: { type: 'pull_request', id: pull.number } },
    member,
  );
  await api('POST', repo('/agent-actions'), 201, { name: 'scan-bot', action: 'scanned', summary: 'Clean', target: { type: 'commit', id: mainHead } }, member);

  // Organization events: an import that succeeds (a mirror, then cut over), one that fails, a repository deleted.
  const served = path.join(g.dir, 'served');
  fs.mkdirSync(served);
  await g.ok(['clone', '-q', '--mirror', work, path.join(served, 'src.git')]);
  const daemon = await startGitDaemon(t, served);
  await api('POST', '/repos/import', 202, { source_url: daemon.url('src'), target_org: 'demo', name: 'gadgets', mirror: true });
  await api('POST', '/repos/import', 202, { source_url: daemon.url('missing'), target_org: 'demo', name: 'never' });
  const db = w.running.services.db;
  await waitFor(async () => Number((await db('import_jobs').whereNull('finished_at').count({ n: '*' }))[0].n) === 0, {
    timeoutMs: 60_000,
    what: 'imports done',
  });
  await api('DELETE', '/repos/demo/gadgets/mirror', 200);
  await api('POST', '/orgs/demo/repos', 201, { name: 'doomed' });
  await api('DELETE', '/repos/demo/doomed', 204);
  await w.pushesRecorded();
  return { issue, pull, pipeline };
}

t.test('every link in every payload and API answer leads to a page that shows its subject', async (t) => {
  const w = await startUiWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const base = w.config.baseUrl;
  const mia = await buildUser(w, 'mia', { org: 'demo', role: 'member' });
  const rx = await startReceiver(t);
  const hook = await w.api('POST', '/api/v1/orgs/demo/webhooks', { body: { url: `${rx.url}/ok/every`, events: ['*'] } });
  t.equal(hook.status, 201, 'a webhook for every event');
  const { issue, pull, pipeline } = await causeEveryEvent(t, w, mia.token);
  await deliveriesSettled(w.running.services.db, { webhookId: hook.body.id });

  const payloads = rx.hits.filter((h) => h.path === '/ok/every').map((h) => JSON.parse(h.body.toString('utf8')));
  const seen = new Set(payloads.map((p) => (p.action ? `${p.event} ${p.action}` : p.event)));
  for (const kind of EXPECTED) t.ok(seen.has(kind), `a ${kind} payload arrived`);

  // The API's answers for the same things.
  const answers: Array<[string, unknown]> = [];
  for (const url of [
    '/repos/demo/widgets',
    '/repos/demo/gadgets',
    `/repos/demo/widgets/issues/${issue.number}`,
    '/repos/demo/widgets/issues?state=all',
    `/repos/demo/widgets/pulls/${pull.number}`,
    '/repos/demo/widgets/pulls?state=all',
    `/repos/demo/widgets/pipelines/${pipeline.id}`,
    '/orgs/demo/repos',
  ]) {
    const res = await w.api('GET', `/api/v1${url}`, { token: mia.token });
    t.equal(res.status, 200, `GET ${url}`);
    answers.push([`GET ${url}`, res.body]);
  }

  const links = [
    ...payloads.flatMap((p, i) => linksIn(p, base, `${p.event}${p.action ? ` ${p.action}` : ''} #${i}`)),
    ...answers.flatMap(([where, body]) => linksIn(body, base, where)),
  ];
  // The deleted repository's links are gone with it (as on GitHub): they must be the 404 everyone gets.
  const gone = links.filter((l) => l.url.startsWith(`${base}/demo/doomed`));
  const live = links.filter((l) => !gone.includes(l));
  t.ok(gone.length > 0 && live.length > 50, `${live.length} links to follow, ${gone.length} of a deleted repository`);

  // Followed as a member of the organization, signed in through the browser's session.
  const { page } = await openBrowser(t);
  await signIn(page, w, mia.token);
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const pages = new Map<string, { status: number; text: string }>();
  const open = async (url: string) => {
    if (!pages.has(url)) {
      const res = await fetch(url, { headers: { cookie, accept: 'text/html' } });
      pages.set(url, { status: res.status, text: pageText(await res.text()) });
    }
    return pages.get(url)!;
  };
  const checked = new Set<string>();
  const kinds = new Map<string, number>();
  for (const link of live) {
    const key = `${link.url}\n${link.subject}`;
    if (checked.has(key)) continue;
    checked.add(key);
    const kind = new URL(link.url).pathname.split('/')[3] ?? (new URL(link.url).pathname.split('/')[2] ? 'repository' : 'organization');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    const shown = await open(link.url);
    // Commit pages (/commit/<sha>) are another part's; the assertion names them so a failure says which page is missing.
    const label = `${kind === 'commit' ? '[commit page] ' : ''}${link.where}: ${link.url}`;
    t.equal(shown.status, 200, `${label} answers 200`);
    t.ok(shown.text.includes(squash(link.subject)), `${label} shows "${link.subject}"`);
  }
  for (const link of gone) t.equal((await open(link.url)).status, 404, `${link.where}: ${link.url} (deleted) is 404`);
  t.ok(
    kinds.get('commit') && kinds.get('issues') && kinds.get('pulls') && kinds.get('pipelines') && kinds.get('repository') && kinds.get('organization'),
    `links of every kind followed: ${JSON.stringify(Object.fromEntries(kinds))}`,
  );
  const pipelinePage = await open(pipeline.url);
  t.ok(pipelinePage.text.includes(`#${pipeline.id}`), 'the pipeline page shows its id');

  // The same links are the same 404 as a missing page for someone outside the organization.
  const stranger = await buildUser(w, 'sam', { org: 'elsewhere', role: 'owner' });
  const { page: other } = await openBrowser(t);
  await signIn(other, w, stranger.token);
  const strangerCookie = (await other.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  for (const url of [
    `${base}/demo/widgets/issues/${issue.number}`,
    `${base}/demo/widgets/pulls/${pull.number}`,
    pipeline.url,
    `${base}/demo/widgets/releases/tag/v1.0`,
  ]) {
    for (const [who, c] of [
      ['another organization’s owner', strangerCookie],
      ['anonymous', ''],
    ]) {
      const res = await fetch(url, { headers: { cookie: c, accept: 'text/html' } });
      t.equal(res.status, 404, `${url} is 404 to ${who}`);
      t.notMatch(await res.text(), /wobbles|for good|ci\/build|First light/, `and shows nothing of it to ${who}`);
    }
  }
});
