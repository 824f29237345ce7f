import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/cli.ts';
import { startServeProcess } from '../helpers/serveProcess.ts';

async function environment(t: any) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-cli-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
  };
}

t.test('org, user and token commands, with their exit codes', async (t) => {
  const env = await environment(t);
  t.equal((await runCli(['migrate'], env)).code, 0);
  const org = await runCli(['org', 'create', 'acme'], env);
  t.equal(org.code, 0, org.stderr);
  t.equal((await runCli(['org', 'create', 'acme'], env)).code, 1, 'existing org is a failure');
  t.equal((await runCli(['user', 'create', 'bob', '--org', 'acme', '--role', 'owner'], env)).code, 0);
  t.equal((await runCli(['user', 'create', 'eve', '--org', 'nope'], env)).code, 1);
  t.equal((await runCli(['user', 'create', 'eve', '--role', 'king'], env)).code, 2, 'bad choice is usage');
  t.equal((await runCli(['user', 'create'], env)).code, 2, 'missing argument is usage');
  t.equal((await runCli(['org', 'create', '../x'], env)).code, 2, 'bad name is usage');
  t.equal((await runCli(['frobnicate'], env)).code, 2, 'unknown command is usage');
  t.equal((await runCli(['token', 'create', 'bob', '--expires-in', 'soon'], env)).code, 2);
  t.equal((await runCli(['token', 'create', 'nobody'], env)).code, 1);
  const token = await runCli(['token', 'create', 'bob', '--expires-in', '30d'], env);
  t.equal(token.code, 0);
  t.match(token.stdout, /^wharf_[A-Za-z0-9_-]{43}\n$/, 'the token alone on stdout');
  t.equal((await runCli(['--version'], env)).code, 0);
});

t.test('serve: first start prints an admin token that works; CLI tokens work; SIGTERM exits 0', async (t) => {
  const env = await environment(t);
  t.equal((await runCli(['org', 'create', 'acme'], env)).code, 0);
  const node = await startServeProcess(env, { t, timeoutMs: 20_000 });
  const { url } = node;
  const adminToken = node.token!;
  t.match(adminToken, /^wharf_\S+$/, 'the first start printed an admin token');
  const me = await fetch(`${url}/api/v1/user`, { headers: { authorization: `Bearer ${adminToken}` } });
  t.equal(me.status, 200);
  t.equal((await me.json()).login, 'admin');

  t.equal((await runCli(['user', 'create', 'bob', '--org', 'acme'], env)).code, 0);
  const bobToken = (await runCli(['token', 'create', 'bob'], env)).stdout.trim();
  const bob = await fetch(`${url}/api/v1/user`, { headers: { authorization: `Bearer ${bobToken}` } });
  t.same((await bob.json()).orgs, [{ name: 'acme', role: 'member' }]);

  t.equal(await node.stop(), 0);
});

t.test('bad configuration stops start-up with one line naming the variable', async (t) => {
  const env = await environment(t);
  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['WEBHOOK_RETRY_SCHEDULE', '0s,soon'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
  ]) {
    const run = await runCli(['serve'], { ...env, [name]: value });
    t.equal(run.code, 1, name);
    t.match(run.stderr, new RegExp(`^wharf: configuration error: ${name}: .+\\n$`), `${name} named in one line`);
  }
});
