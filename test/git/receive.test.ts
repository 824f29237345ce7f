import t from 'tap';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { backendsAlive, gitClient, repoUrl, type GitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';

const ZERO = '0'.repeat(40);
const basic = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;

/** One pkt-line. */
const pkt = (line: string) => Buffer.from((line.length + 4).toString(16).padStart(4, '0') + line);

/** A receive-pack request body creating `ref` at a new root commit, with its pack; built by the real git. */
async function receivePackBody(
  g: GitClient,
  ref: string,
  files: Record<string, string | Buffer> = { 'evil.txt': 'evil\n' },
): Promise<{ body: Buffer; sha: string; packStart: number }> {
  const dir = path.join(g.dir, `raw-${randomBytes(3).toString('hex')}`);
  await g.ok(['init', '-q', dir]);
  const sha = await g.commit(dir, 'raw push', files);
  const pack = execFileSync('git', ['pack-objects', '--stdout', '--revs', '-q'], { cwd: dir, input: `${sha}\n`, maxBuffer: 64 * 1024 * 1024 });
  const head = Buffer.concat([pkt(`${ZERO} ${sha} ${ref}\0 report-status\n`), Buffer.from('0000')]);
  return { body: Buffer.concat([head, pack]), sha, packStart: head.length };
}

function postReceivePack(w: TestWharf, repo: string, body: Buffer, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/x-git-receive-pack-request' };
  if (authorization) headers.authorization = authorization;
  return fetch(`${w.url}/${repo}.git/git-receive-pack`, { method: 'POST', headers, body: new Uint8Array(body) });
}

async function waitForNoBackends(): Promise<number> {
  // A timeout is not thrown here: the caller asserts the count, which says how many are left.
  await waitFor(() => backendsAlive() === 0, { timeoutMs: 5_000, intervalMs: 50, what: 'every git http-backend to exit' }).catch(() => {});
  return backendsAlive();
}

t.test('pushes without valid credentials, or by a non-member, write nothing', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const bob = await buildUser(w, 'bob');
  await buildRepo(w, 'acme', 'pub', 'public');
  const g = gitClient(t);
  const bare = path.join(w.config.reposDir, 'acme', 'pub.git');
  const refsNow = () => execFileSync('git', ['for-each-ref'], { cwd: bare }).toString();

  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  await g.commit(src, 'one');
  const anonymous = await g.run(['push', repoUrl(w, 'acme/pub'), 'main'], { cwd: src });
  t.not(anonymous.code, 0, 'an anonymous git push fails');
  const outsider = await g.run(['push', repoUrl(w, 'acme/pub', bob.token), 'main'], { cwd: src });
  t.not(outsider.code, 0, 'a non-member git push fails');
  t.match(outsider.stderr, /403/);
  t.equal(refsNow(), '', 'no ref written');

  const { body, sha } = await receivePackBody(g, 'refs/heads/evil');
  const noAuth = await postReceivePack(w, 'acme/pub', body);
  t.equal(noAuth.status, 401, 'raw POST without credentials');
  t.equal(noAuth.headers.get('www-authenticate'), 'Basic realm="Wharf"');
  t.equal((await postReceivePack(w, 'acme/pub', body, basic('wharf_not_a_token'))).status, 401, 'raw POST with a bad token');
  t.equal((await postReceivePack(w, 'acme/pub', body, basic(bob.token))).status, 403, 'raw POST by a non-member');
  t.equal((await postReceivePack(w, 'acme/nope', body)).status, 401, 'raw POST to a missing repository');
  t.equal(refsNow(), '', 'still no ref');
  t.throws(() => execFileSync('git', ['cat-file', '-e', sha], { cwd: bare, stdio: 'ignore' }), 'and not even the object');
  await w.pushesRecorded();
  t.equal((await w.running.services.db('events').count('* as n').first())!.n, 0, 'no event');

  const allowed = await postReceivePack(w, 'acme/pub', body, basic(ann.token));
  t.equal(allowed.status, 200, 'the same body from a member is accepted');
  t.match(Buffer.from(await allowed.arrayBuffer()).toString('latin1'), /unpack ok/);
  t.match(refsNow(), new RegExp(`^${sha} commit\trefs/heads/evil`), 'so the body was a real push');
});

t.test('bad packs are refused and leave the refs unchanged', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await buildRepo(w, 'acme', 'app');
  const g = gitClient(t);
  const url = repoUrl(w, 'acme/app', ann.token);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  const good = await g.commit(src, 'good');
  await g.ok(['push', '-q', url, 'main'], { cwd: src });
  const before = await g.ok(['ls-remote', url]);

  // Even a repository whose own config turns checking off (an imported one, say) is checked.
  await g.ok(['config', 'receive.fsckObjects', 'false'], { cwd: path.join(w.config.reposDir, 'acme', 'app.git') });
  // A commit with no author: git's client sends it, receive.fsckObjects refuses it.
  const tree = (await g.ok(['rev-parse', 'HEAD^{tree}'], { cwd: src })).trim();
  const broken = (
    await g.ok(['hash-object', '-t', 'commit', '--literally', '-w', '--stdin'], {
      cwd: src,
      input: `tree ${tree}\nparent ${good}\ncommitter A <a@b.c> 1700000000 +0000\n\nno author\n`,
    })
  ).trim();
  const push = await g.run(['push', url, `${broken}:refs/heads/main`], { cwd: src });
  t.not(push.code, 0, 'the push fails');
  t.match(push.stderr, /missingAuthor|unpack/, 'because the pack does not pass fsck');
  t.equal(await g.ok(['ls-remote', url]), before, 'refs unchanged');

  const { body, packStart } = await receivePackBody(g, 'refs/heads/corrupt', { 'data.bin': randomBytes(4096) });
  for (let i = packStart + 40; i < body.length - 30; i += 97) body[i] ^= 0xff;
  const answer = await postReceivePack(w, 'acme/app', body, basic(ann.token));
  t.ok(answer.status < 500, `a corrupt pack is not a server error (${answer.status})`);
  t.notMatch(Buffer.from(await answer.arrayBuffer()).toString('latin1'), /unpack ok/, 'git reports the unpack failure');
  t.equal(await g.ok(['ls-remote', url]), before, 'refs unchanged');
  await w.pushesRecorded();
  t.equal((await w.running.services.db('events').count('* as n').first())!.n, 1, 'only the first push raised an event');
});

t.test('a client that aborts mid-push or mid-clone leaves the server up and the repository intact', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await buildRepo(w, 'acme', 'app');
  const g = gitClient(t);
  const url = repoUrl(w, 'acme/app', ann.token);
  const src = path.join(g.dir, 'src');
  await g.ok(['init', '-q', src]);
  const big = await g.commit(src, 'big', { 'big.bin': randomBytes(8 * 1024 * 1024) });
  await g.ok(['push', '-q', url, 'main'], { cwd: src });

  // Push: send the commands and half of the pack, then go away.
  const { body } = await receivePackBody(g, 'refs/heads/half', { 'half.bin': randomBytes(4 * 1024 * 1024) });
  const abort = new AbortController();
  let sent = 0;
  const stream = new ReadableStream({
    pull(controller) {
      if (sent >= body.length / 2) {
        setTimeout(() => abort.abort(), 50);
        return new Promise(() => {}); // never more
      }
      controller.enqueue(new Uint8Array(body.subarray(sent, sent + 65536)));
      sent += 65536;
    },
  });
  const pushing = fetch(`${w.url}/acme/app.git/git-receive-pack`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basic(ann.token) },
    body: stream,
    signal: abort.signal,
    duplex: 'half',
  } as RequestInit);
  await t.rejects(pushing, 'the client gave up');
  t.equal(await waitForNoBackends(), 0, 'the backend was stopped');

  // Clone: ask for the big commit, read the first bytes, go away.
  const want = Buffer.concat([pkt(`want ${big} side-band-64k\n`), Buffer.from('0000'), pkt('done\n')]);
  const cloneAbort = new AbortController();
  const res = await fetch(`${w.url}/acme/app.git/git-upload-pack`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-git-upload-pack-request', authorization: basic(ann.token) },
    body: new Uint8Array(want),
    signal: cloneAbort.signal,
  });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read();
  cloneAbort.abort();
  await reader.read().catch(() => {});
  t.equal(await waitForNoBackends(), 0, 'the backend was stopped');

  t.equal((await w.api('GET', '/api/v1/health')).status, 200, 'the server is up');
  t.notMatch(await g.ok(['ls-remote', url]), /refs\/heads\/half/, 'the aborted push wrote no ref');
  const back = path.join(g.dir, 'back');
  t.equal((await g.run(['clone', '-q', url, back])).code, 0, 'a clone still works');
  t.equal((await g.run(['fsck', '--strict'], { cwd: path.join(w.config.reposDir, 'acme', 'app.git') })).code, 0, 'the repository is intact');
  await g.commit(src, 'after');
  t.equal((await g.run(['push', '-q', url, 'main'], { cwd: src })).code, 0, 'and pushes still work');
});

t.test('a request body git cannot read is a 400, never a 200 with nothing in it', async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await buildRepo(w, 'acme', 'pub', 'public');
  const post = (service: string, headers: Record<string, string>, body: string) =>
    fetch(`${w.url}/acme/pub.git/${service}`, { method: 'POST', headers: { 'content-type': `application/x-${service}-request`, ...headers }, body });
  t.equal((await post('git-upload-pack', {}, 'garbage')).status, 400, 'upload-pack: not pkt-lines');
  t.equal((await post('git-upload-pack', { 'content-encoding': 'gzip' }, 'garbage')).status, 400, 'upload-pack: not gzip');
  t.equal((await post('git-receive-pack', { authorization: basic(ann.token) }, 'garbage')).status, 400, 'receive-pack: not pkt-lines');
  const wrongType = await fetch(`${w.url}/acme/pub.git/git-upload-pack`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '0000' });
  t.equal(wrongType.status, 415, "git's own refusal keeps its status");
  const empty = await post('git-upload-pack', {}, '0000');
  t.equal(empty.status, 200, 'a request with nothing to do is answered, empty');
  t.equal(await empty.text(), '');
  t.equal(execFileSync('git', ['for-each-ref'], { cwd: path.join(w.config.reposDir, 'acme', 'pub.git') }).toString(), '', 'no ref written');
});

t.test("git's credential probe (a lone flush packet) is answered as the backend would, and other short bodies still reach git", async (t) => {
  const w = await startWharf(t);
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await buildRepo(w, 'acme', 'app');
  const probe = await postReceivePack(w, 'acme/app', Buffer.from('0000'), basic(ann.token));
  t.equal(probe.status, 200, 'the probe passes with credentials');
  t.equal(probe.headers.get('content-type'), 'application/x-git-receive-pack-result');
  t.equal(probe.headers.get('cache-control'), 'no-cache, max-age=0, must-revalidate');
  t.equal(await probe.text(), '', 'and carries nothing');
  t.equal((await postReceivePack(w, 'acme/app', Buffer.from('0000'))).status, 401, 'without credentials it is challenged');
  t.equal((await postReceivePack(w, 'acme/app', Buffer.from('0000'), basic('wharf_not_a_token'))).status, 401, 'bad credentials fail it');
  const wrongType = await fetch(`${w.url}/acme/app.git/git-receive-pack`, {
    method: 'POST',
    headers: { authorization: basic(ann.token), 'content-type': 'text/plain' },
    body: '0000',
  });
  t.equal(wrongType.status, 415, 'a wrong content type is still refused by git');
  t.equal(
    (await postReceivePack(w, 'acme/app', Buffer.from('00zz'), basic(ann.token))).status,
    400,
    'a short body that is not a flush goes to git, which refuses it',
  );
  await w.pushesRecorded();
  t.equal((await w.running.services.db('events').count('* as n').first())!.n, 0, 'no event');
  t.equal(execFileSync('git', ['for-each-ref'], { cwd: path.join(w.config.reposDir, 'acme', 'app.git') }).toString(), '', 'no ref written');
});
