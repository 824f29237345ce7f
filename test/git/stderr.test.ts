import t from 'tap';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { readGitStderr } from '../../src/git/stderr.ts';
import { describeGitFailure } from '../../src/remote/gitErrors.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { startProxy } from '../import/helpers.ts';

// Every sample is what a real git run printed, captured as the test runs.
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-stderr-'));
t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
const env = { PATH: process.env.PATH, HOME: base, LANG: 'C', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** Runs git (asynchronously: the servers it talks to run in this process) and returns its stderr. */
function run(args: string[], input?: string | Buffer, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('git', ['-c', 'http.followRedirects=false', '-c', 'credential.helper=', ...args], {
    env: { ...env, ...extraEnv },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  child.stdin.on('error', () => {});
  child.stdin.end(input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

/** Runs git, expecting it to fail, and returns its stderr. */
async function failing(args: string[], input?: string | Buffer, extraEnv: Record<string, string> = {}): Promise<string> {
  const r = await run(args, input, extraEnv);
  if (r.code === 0) throw new Error(`git ${args.join(' ')} succeeded`);
  return r.stderr;
}

const gitIn = (cwd: string, args: string[], input?: string) =>
  execFileSync('git', ['-c', 'user.name=A', '-c', 'user.email=a@example.com', ...args], { cwd, env, input, encoding: 'utf8' }).trim();

/** A repository of three commits of incompressible content, big enough that a cut lands inside the pack. */
function buildRepo(name: string): string {
  const dir = path.join(base, name);
  fs.mkdirSync(dir);
  gitIn(dir, ['init', '-q', '--bare']);
  const work = path.join(base, `${name}-work`);
  gitIn(base, ['clone', '-q', dir, work]);
  for (let i = 0; i < 3; i++) {
    fs.writeFileSync(path.join(work, `f${i}`), Buffer.from(Array.from({ length: 100_000 }, () => Math.floor(Math.random() * 256))));
    gitIn(work, ['add', '.']);
    gitIn(work, ['commit', '-qm', `c${i}`]);
  }
  gitIn(work, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
  return dir;
}

/** An HTTP server on loopback whose every answer is `answer`. */
async function serve(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<string> {
  const server = http.createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

const status = (code: number, headers: Record<string, string> = {}) => serve((_req, res) => res.writeHead(code, headers).end());

t.test('not found: a path that is no repository, and an HTTP 404', async (t) => {
  const local = await failing(['ls-remote', path.join(base, 'nothing-here')]);
  t.equal(readGitStderr(local).kind, 'not_found', local);
  const remote = await failing(['ls-remote', `${await status(404)}/x.git`]);
  t.equal(readGitStderr(remote).kind, 'not_found', remote);
  t.equal(describeGitFailure(remote, null).message, 'no Git repository found at the source URL');
});

t.test('authentication: asked for credentials without any, and refused ones', async (t) => {
  const url = await status(401, { 'WWW-Authenticate': 'Basic realm="x"' });
  const none = await failing(['ls-remote', `${url}/x.git`]);
  t.equal(readGitStderr(none).kind, 'auth_failed', none);
  const askpass = path.join(base, 'askpass.sh');
  fs.writeFileSync(askpass, '#!/bin/sh\necho wrong\n', { mode: 0o700 });
  const refused = await failing(['ls-remote', `${url}/x.git`], undefined, { GIT_ASKPASS: askpass });
  t.equal(readGitStderr(refused).kind, 'auth_failed', refused);
  t.notOk(describeGitFailure(refused, { username: 'wrong', password: 'wrong' }).message.includes('wrong'), 'the credentials are scrubbed');
});

t.test('forbidden and redirect answers', async (t) => {
  const forbidden = await failing(['ls-remote', `${await status(403)}/x.git`]);
  t.equal(readGitStderr(forbidden).kind, 'forbidden', forbidden);
  const redirect = await failing(['ls-remote', `${await status(302, { Location: 'http://127.0.0.1:1/y.git' })}/x.git`]);
  t.equal(readGitStderr(redirect).kind, 'redirect', redirect);
});

t.test('unreachable: nothing listens at the address, over git and http', async (t) => {
  // A port just freed: nothing listens there.
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
  for (const url of [`git://127.0.0.1:${closed}/x.git`, `http://127.0.0.1:${closed}/x.git`]) {
    const stderr = await failing(['ls-remote', url]);
    t.equal(readGitStderr(stderr).kind, 'unreachable', stderr);
    t.equal(describeGitFailure(stderr, null).broken, false, 'nothing to resume');
  }
});

t.test('stalled: curl gives up on a server that drips', async (t) => {
  const url = await serve((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement' });
    res.write('001e# service=git-upload-pack\n');
  });
  const stalled = await failing(['-c', 'http.lowSpeedLimit=1000', '-c', 'http.lowSpeedTime=1', 'ls-remote', `${url}/x.git`]);
  t.equal(readGitStderr(stalled).kind, 'stalled', stalled);
});

t.test('fsck: an object that fails transfer.fsckObjects', async (t) => {
  const bad = path.join(base, 'bad.git');
  gitIn(base, ['init', '-q', '--bare', bad]);
  const tree = gitIn(bad, ['hash-object', '-t', 'tree', '-w', '--stdin'], '');
  const commit = gitIn(
    bad,
    ['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'],
    `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +99999\n\nx\n`,
  );
  gitIn(bad, ['update-ref', 'refs/heads/main', commit]);
  const stderr = await failing(['-c', 'transfer.fsckObjects=true', 'clone', '-q', '--bare', '--no-local', bad, path.join(base, 'fsck-copy.git')]);
  const read = readGitStderr(stderr);
  t.equal(read.kind, 'fsck_failed', stderr);
  t.match(read.line, new RegExp(`^object ${commit}: badTimezone:`), 'the line names the object and the check');
});

t.test('too large: http-backend refuses a body over its buffer', async (t) => {
  const repo = buildRepo('big.git');
  // http-backend answers with a CGI status and may exit 0; its stderr is what Wharf reads.
  const { stderr } = await run(['http-backend'], Buffer.alloc(1000), {
    GIT_HTTP_MAX_REQUEST_BUFFER: '100',
    GIT_PROJECT_ROOT: path.dirname(repo),
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: 'POST',
    PATH_INFO: '/big.git/git-upload-pack',
    CONTENT_TYPE: 'application/x-git-upload-pack-request',
    CONTENT_LENGTH: '1000',
  });
  t.equal(readGitStderr(stderr).kind, 'too_large', stderr);
});

t.test('connection broken: a pack cut mid-transfer; a server that closes before answering is a plain failure', async (t) => {
  const repo = buildRepo('cut.git');
  const daemon = await startGitDaemon(t, path.dirname(repo));
  const proxy = await startProxy(t, daemon.port, { cutEvery: 4000 });
  const cut = await failing(['clone', '-q', '--bare', `git://127.0.0.1:${proxy.port}/cut.git`, path.join(base, 'cut-copy.git')]);
  t.equal(readGitStderr(cut).kind, 'connection_broken', cut);
  t.equal(describeGitFailure(cut, null).broken, true);
  // It reads the request, then closes without a word.
  const closer = net.createServer((s) => s.once('data', () => s.end()));
  await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', resolve));
  t.teardown(() => closer.close());
  const hungUp = await failing(['ls-remote', `git://127.0.0.1:${(closer.address() as net.AddressInfo).port}/x.git`]);
  // Nothing arrived, so there is nothing to resume: git says only that it could not read.
  t.same(readGitStderr(hungUp), { kind: 'failed', line: 'fatal: Could not read from remote repository.' }, hungUp);
  t.equal(describeGitFailure(hungUp, null).broken, false);
});

t.test('anything else is a plain failure, named by its last fatal line', async (t) => {
  const stderr = await failing(['rev-parse', '--verify', 'no-such-ref^{commit}'], undefined, {});
  t.same(readGitStderr(stderr), { kind: 'failed', line: stderr.trim().split('\n').pop() });
});
