import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCli, WHARF_BIN } from '../helpers/cli.ts';
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
  t.equal((await runCli(['migrate'], env)).code, 0);
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

const ROOT = path.resolve(path.dirname(WHARF_BIN), '..');

/** Runs a command line through sh in `cwd` with `env` added (npm's update check off), as a user types it. */
function shell(command: string, cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', command], { cwd, env: { ...process.env, npm_config_update_notifier: 'false', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

t.test('token create: the token alone is captured by $(npm run --silent wharf -- …) and $(npx wharf …)', async (t) => {
  const env = await environment(t);
  t.equal((await runCli(['migrate'], env)).code, 0);
  t.equal((await runCli(['user', 'create', 'alice'], env)).code, 0);
  const token = /^wharf_[A-Za-z0-9_-]{43}$/;
  for (const command of ['npm run --silent wharf -- token create alice', 'npx wharf token create alice']) {
    const run = await shell(`TOKEN=$(${command}) && printf '%s' "$TOKEN"`, ROOT, env);
    t.equal(run.code, 0, `${command}: ${run.stderr}`);
    t.match(run.stdout, token, `${command} captures exactly the token`);
  }
  // Plain `npm run` puts npm's banner on stdout; the command says so on stderr and names the forms that work.
  const noisy = await shell('npm run wharf -- token create alice', ROOT, env);
  t.equal(noisy.code, 0, noisy.stderr);
  t.match(noisy.stderr, /npm run --silent wharf -- token create alice/, 'the banner is explained on stderr');
});

t.test("a command run away from the server's database refuses and creates nothing", async (t) => {
  const env = await environment(t);
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-elsewhere-'));
  t.teardown(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
  // Another directory, no DATA_DIR or DATABASE_URL: the default ./data/wharf.sqlite does not exist there.
  const defaults = { ...env, DATA_DIR: '', DATABASE_URL: '', REPOS_DIR: '' };
  for (const args of [
    ['org', 'create', 'ghost'],
    ['user', 'create', 'ghost'],
    ['token', 'create', 'admin'],
    ['webhook', 'redeliver', '1', '--since', '1h'],
  ]) {
    const run = await shell(`node ${WHARF_BIN} ${args.join(' ')}`, elsewhere, defaults);
    t.equal(run.code, 1, `${args.join(' ')} fails`);
    t.equal(run.stdout, '', 'reports no success');
    t.match(run.stderr, /^wharf: no Wharf database at .*data\/wharf\.sqlite: .*DATA_DIR.*DATABASE_URL.*\n$/, 'one line naming DATA_DIR and DATABASE_URL');
    t.equal(run.stderr.split('\n').length, 2, 'one line');
  }
  t.same(fs.readdirSync(elsewhere), [], 'no database file, no data directory');
  // DATABASE_URL naming a database with no Wharf schema (an empty Postgres database, an empty SQLite file) refuses too.
  if (env.DATABASE_URL.startsWith('sqlite:')) fs.writeFileSync(env.DATABASE_URL.slice('sqlite:'.length), '');
  const empty = await runCli(['org', 'create', 'ghost'], env);
  t.equal(empty.code, 1);
  t.match(empty.stderr, /^wharf: the database of .* holds no Wharf schema: set DATABASE_URL \(or DATA_DIR\)/);
  t.notMatch(empty.stderr, /postgres:\/\//, 'never prints the URL (it may hold a password)');
  // migrate sets one up on purpose; then the same command works.
  t.equal((await runCli(['migrate'], env)).code, 0);
  t.equal((await runCli(['org', 'create', 'ghost'], env)).code, 0);
});

t.test('a SIGTERM sent the moment the address is printed stops it cleanly (exit 0), start after start', async (t) => {
  const env = await environment(t);
  // The first start creates the database; the later ones reach their banner fast, the race this covers.
  for (let i = 0; i < 12; i++) {
    const node = await startServeProcess(env, { t, timeoutMs: 20_000 });
    t.equal(await node.stop(), 0, `start ${i + 1} ended by its own shutdown, not killed by the signal`);
  }
});

t.test('first start prints the web UI address and the sign-in token together', async (t) => {
  const env = await environment(t);
  const node = await startServeProcess(env, { t, timeoutMs: 20_000 });
  const out = node.output();
  t.match(out, new RegExp(`^Open ${node.url.replaceAll('.', '\\.')}/ and sign in with this token: wharf_\\S+$`, 'm'), 'address and token on one line');
  t.match(out, /git push and clone take it as the password, with any user name/);
  t.notMatch(out, /curl/, 'no curl line in place of the UI');
  const page = await fetch(`${node.url}/`);
  t.equal(page.status, 200, 'the address it names serves the UI');
  t.equal(await node.stop(), 0);
  // A later start prints no token.
  const again = await startServeProcess(env, { t, timeoutMs: 20_000 });
  t.notMatch(again.output(), /sign in with this token/);
  t.equal(await again.stop(), 0);
});
