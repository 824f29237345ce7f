import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { asUserRuns, runCli, WHARF_BIN } from '../helpers/cli.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import type { TestLike } from '../helpers/wharf.ts';
import { loadConfig } from '../../src/config.ts';
import { ListenError, startServer } from '../../src/server.ts';
import { connect } from '../../src/db/connect.ts';

/** A loopback port some other program listens on, for the test's length. */
async function occupiedPort(t: TestLike): Promise<number> {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  return (blocker.address() as net.AddressInfo).port;
}

/** Runs `wharf serve` to its end (killed after `limitMs`), timing it. */
function serveUntilExit(env: Record<string, string>, limitMs: number) {
  const [command, args, asUser] = asUserRuns([WHARF_BIN, 'serve']);
  const started = Date.now();
  const child = spawn(command, args, { env: { ...process.env, ...asUser, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  return new Promise<{ code: number | null; ms: number; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ms: Date.now() - started, stdout, stderr });
    }),
  );
}

async function environment(t: TestLike) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-busy-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return serveEnv(dir, database.url);
}

t.test('a port in use: one line naming it and what to do, a non-zero exit at once, and no user created behind it', async (t) => {
  const env = await environment(t);
  const port = await occupiedPort(t);
  // The process starts Node and tsx first (a few seconds on a loaded machine); what matters is that it ends rather than hangs.
  const run = await serveUntilExit({ ...env, PORT: String(port) }, 30_000);
  t.not(run.code, 0, 'exits non-zero');
  t.not(run.code, null, 'exits by itself, not killed after hanging');
  t.ok(run.ms < 15_000, `ends without waiting (${run.ms} ms)`);
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line on stderr: ${run.stderr}`);
  t.match(lines[0], new RegExp(`Port ${port} is in use: another program listens there\\. Set PORT to a free port \\(PORT=\\d+ npm start\\)\\.`));
  t.notMatch(run.stderr, /EADDRINUSE/, 'not the bare system error');
  t.notMatch(run.stdout, /listening|Created user/);

  // The first start on a free port is still the first: it creates the admin and shows the token.
  const node = await startServeProcess(env, { t, timeoutMs: 60_000 });
  t.match(node.token, /^wharf_/, 'the token is shown on the start that can listen');
  t.equal(await node.stop(), 0);
});

t.test('in the process: startServer refuses a busy port within a second, with the sentence, before touching the database', async (t) => {
  const env = await environment(t);
  const port = await occupiedPort(t);
  const config = loadConfig({ ...env, PORT: String(port) });
  const started = Date.now();
  const err = await startServer(config).then(
    () => null,
    (e: unknown) => e,
  );
  const ms = Date.now() - started;
  t.ok(err instanceof ListenError, `a ListenError (${String(err)})`);
  t.match((err as Error).message, `Port ${port} is in use`);
  // Before migrating: the refusal takes milliseconds (a loaded machine may stretch them).
  t.ok(ms < 1_000, `refused in ${ms} ms`);
  const db = connect(config.databaseUrl);
  t.teardown(() => db.destroy());
  t.notOk(await db.schema.hasTable('users'), 'the database is untouched: not even migrated, so no admin was created');
});

t.test('until a token has been used, every start says how to get one', async (t) => {
  const env = await environment(t);
  const first = await startServeProcess(env, { t, timeoutMs: 60_000 });
  t.notMatch(first.output(), /Sign in with a token/, 'the first start shows the token itself');
  t.equal(await first.stop(), 0);

  // The token shown was lost (say the terminal was closed): the next start says how to get one.
  const second = await startServeProcess(env, { t, timeoutMs: 60_000 });
  t.match(second.output(), /Sign in with a token: npx wharf token create admin\n/);
  const token = (await runCli(['token', 'create', 'admin'], env)).stdout.trim();
  const me = await fetch(`${second.url}/api/v1/user`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(me.status, 200, 'the CLI token signs in');
  t.equal(await second.stop(), 0);

  const third = await startServeProcess(env, { t, timeoutMs: 60_000 });
  t.notMatch(third.output(), /Sign in with a token/, 'once a token was used, starts stay quiet');
  t.equal(await third.stop(), 0);
});
