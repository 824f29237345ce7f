import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';

const GUARD = new URL('../helpers/loopbackOnly.mjs', import.meta.url).href;

/**
 * Runs `code` (an ES module) in a child Node process with the guard loaded, as tap loads it
 * into every test process, and a log of its own (not this process's). Before `code` runs,
 * a safety net wraps the (guarded) connect: a connection the guard let through is
 * destroyed and printed "NOT REFUSED". The address tried is 0.0.0.0, which the guard
 * refuses (it is not loopback) but Linux delivers to this host itself, so even a broken
 * guard sends nothing off the machine. (A code that
 * sets globalThis.noSafetyNet brings its own.)
 */
function runGuarded(code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const safety = `import net from 'node:net';
const guarded = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const out = guarded.apply(this, args);
  if (globalThis.noSafetyNet !== true) { this.destroy(); console.log('NOT REFUSED'); }
  return out;
};
`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.WHARF_LOOPBACK_GUARD_LOG;
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [`--import=${GUARD}`, '--input-type=module', '-e', safety + code], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (exit) => resolve({ code: exit, stdout, stderr })));
}

const MESSAGE = /loopback guard: refused an outbound connection to 0\.0\.0\.0:80; tests may only connect to 127\.0\.0\.0\/8 and ::1/;

t.test('this test process runs with the guard, and hands it to the processes it starts', async (t) => {
  t.equal(net.Socket.prototype.connect.name, 'guardedConnect', 'connect is guarded here');
  t.match(process.env.NODE_OPTIONS, /--import=file:\S+\/test\/helpers\/loopbackOnly\.mjs/, 'NODE_OPTIONS carries it to child Node processes');
});

t.test(
  "a connection to 0.0.0.0 (not loopback by the guard's rule, yet Linux delivers it to this host, so even a broken guard sends nothing off the machine) is refused before it is attempted, and fails the process even when caught",
  async (t) => {
    const run = await runGuarded(`
try { net.connect(80, '0.0.0.0'); console.log('connect returned'); } catch (err) { console.log('threw: ' + err.message); }
`);
    t.match(run.stdout, /^threw: /, 'thrown by connect itself, in the calling tick: nothing was sent');
    t.match(run.stdout, MESSAGE);
    t.notMatch(run.stdout, /NOT REFUSED|connect returned/);
    t.equal(run.code, 1, 'the process fails although the error was caught');
    t.match(run.stderr, /tried to reach a non-loopback address/);
  },
);

t.test('fetch (undici) is refused the same way', async (t) => {
  const run = await runGuarded(`
try { await fetch('http://0.0.0.0/'); console.log('fetched'); } catch (err) { console.log('rejected: ' + (err.cause?.message ?? err.message)); }
`);
  t.match(run.stdout, /^rejected: /);
  t.match(run.stdout, MESSAGE);
  t.notMatch(run.stdout, /NOT REFUSED|fetched/);
  t.equal(run.code, 1);
});

t.test('a host name is checked on the addresses it resolves to', async (t) => {
  // A lookup of the test's own, so no resolver is asked: the name resolves to 0.0.0.0, which Linux routes to this host itself. Its
  // safety net: a resolved address reaches the 'lookup' event in the tick before Node
  // connects (one address family, so one address), where the socket is destroyed; the
  // lookup answers in a later tick, so the listener is there to hear it.
  const run = await runGuarded(`
globalThis.noSafetyNet = true;
const lookup = (host, opts, cb) => setImmediate(() => (opts.all ? cb(null, [{ address: '0.0.0.0', family: 4 }]) : cb(null, '0.0.0.0', 4)));
const s = net.connect({ host: 'outside.test', port: 80, lookup, autoSelectFamily: false });
s.on('lookup', (err, ip) => { if (!err) { s.destroy(); console.log('NOT REFUSED ' + ip); } });
s.on('error', (err) => console.log('error: ' + err.message));
`);
  t.match(run.stdout, /error: loopback guard: refused an outbound connection to outside\.test \(0\.0\.0\.0\):80/);
  t.notMatch(run.stdout, /NOT REFUSED/);
  t.equal(run.code, 1);
});

t.test('127.0.0.0/8, ::1 and localhost are let through', async (t) => {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const run = await runGuarded(`
globalThis.noSafetyNet = true; // only loopback here
for (const host of ['127.0.0.1', '[::1]', 'localhost']) console.log(host, await (await fetch('http://' + host + ':${port}/')).text());
`);
  t.equal(run.stdout, `127.0.0.1 ok\n[::1] ok\nlocalhost ok\n`, run.stderr);
  t.equal(run.code, 0);
});
